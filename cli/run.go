package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/config"
)

// Version is the kubeactor build version, reported by `version` and the agents.
var Version = "v0.1.0"

type root struct {
	config.Logging

	Server  serverCmd  `cmd:"" help:"Run the API server, the store and the control-plane actors."`
	Agent   agentCmd   `cmd:"" help:"Run the node agent; --simulate N runs N simulated nodes."`
	Up      upCmd      `cmd:"" help:"Start the whole system on the embedded default (data in ~/.kubeactor/data)."`
	Version versionCmd `cmd:"" help:"Print the kubeactor version."`

	Get     getCmd     `cmd:"" help:"Display one or many resources (kubectl get)."`
	Create  createCmd  `cmd:"" help:"Create resources from a file or stdin (kubectl create -f)."`
	Replace replaceCmd `cmd:"" aliases:"update" help:"Replace resources from a file or stdin (kubectl replace -f)."`
	Delete  deleteCmd  `cmd:"" help:"Delete resources by file, type and name, or label (kubectl delete)."`
}

// Run parses args (args[0] is the program name) and runs the chosen command. It
// returns the process exit code.
func Run(args []string) int {
	return run(args, os.Stdout, os.Stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	var cli root
	exit := -1
	parser, err := kong.New(&cli,
		kong.Name("kubeactor"),
		kong.Description("An actor-model container orchestrator that speaks the Kubernetes v1 API."),
		kong.UsageOnError(),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
	)
	if err != nil {
		fmt.Fprintf(stderr, "kubeactor: %v\n", err)
		return 2
	}
	ctx, err := parser.Parse(normalizeFlags(args[1:]))
	if exit >= 0 {
		return exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubeactor: %v\n", err)
		return 2
	}
	log := newLogger(cli.Logging, stderr)
	if err := ctx.Run(&globals{log: log, stdout: stdout, stderr: stderr}); err != nil {
		var code exitCode
		if errors.As(err, &code) { // already printed, kubectl-style
			return int(code)
		}
		fmt.Fprintf(stderr, "kubeactor: %v\n", err)
		return 1
	}
	return 0
}

// globals are handed to every command's Run.
type globals struct {
	log    *logrus.Logger
	stdout io.Writer
	stderr io.Writer
}

// normalizeFlags accepts the book's spelling of flags with `_` for `-`
// (--insecure_port=8080 is --insecure-port=8080). Values are left alone, and so is
// everything after a bare "--".
func normalizeFlags(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		if strings.HasPrefix(a, "--") {
			name, value, hasValue := strings.Cut(a[2:], "=")
			a = "--" + strings.ReplaceAll(name, "_", "-")
			if hasValue {
				a += "=" + value
			}
		}
		out[i] = a
	}
	return out
}

func newLogger(c config.Logging, w io.Writer) *logrus.Logger {
	log := logrus.New()
	log.SetOutput(w)
	if lvl, err := logrus.ParseLevel(c.LogLevel); err == nil {
		log.SetLevel(lvl)
	}
	if c.LogFormat == "json" {
		log.SetFormatter(&logrus.JSONFormatter{})
	}
	return log
}

type versionCmd struct{}

func (versionCmd) Run(g *globals) error {
	_, err := fmt.Fprintf(g.stdout, "kubeactor %s (Kubernetes API v1, compatible with v1.0.0)\n", Version)
	return err
}
