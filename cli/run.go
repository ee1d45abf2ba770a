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
	"github.com/kubeactor/kubeactor/nodeagent/pause"
)

// Version is the kubeactor build version, reported by `version` and the agents.
var Version = "v0.1.0"

type root struct {
	config.Logging
	config.Glog

	Server  serverCmd  `cmd:"" help:"Run the API server, the store and the control-plane actors."`
	Agent   agentCmd   `cmd:"" help:"Run the node agent; --simulate N runs N simulated nodes."`
	Up      upCmd      `cmd:"" help:"Start the whole system on the embedded default (data in ~/.kubeactor/data)."`
	Version versionCmd `cmd:"" help:"Print the kubeactor version."`
	Members membersCmd `cmd:"" help:"List or remove the master replicas (kubeactor members [-o json|wide], kubeactor members remove NAME)."`

	Get     getCmd     `cmd:"" help:"Display one or many resources (kubectl get)."`
	Create  createCmd  `cmd:"" help:"Create resources from a file or stdin (kubectl create -f)."`
	Replace replaceCmd `cmd:"" aliases:"update" help:"Replace resources from a file or stdin (kubectl replace -f)."`
	Delete  deleteCmd  `cmd:"" help:"Delete resources by file, type and name, or label (kubectl delete)."`

	Label       labelCmd       `cmd:"" help:"Update the labels on a resource (kubectl label)."`
	Annotate    annotateCmd    `cmd:"" help:"Update the annotations on a resource (kubectl annotate)."`
	Scale       scaleCmd       `cmd:"" aliases:"resize" help:"Set a new size for a replication controller (kubectl scale)."`
	Patch       patchCmd       `cmd:"" help:"Update fields of a resource with a patch (kubectl patch)."`
	Logs        logsCmd        `cmd:"" aliases:"log" help:"Print the logs of a container in a pod (kubectl logs)."`
	Exec        execCmd        `cmd:"" help:"Execute a command in a container (kubectl exec)."`
	PortForward portForwardCmd `cmd:"" name:"port-forward" help:"Forward local ports to a pod (kubectl port-forward)."`

	RollingUpdate rollingUpdateCmd `cmd:"" name:"rolling-update" aliases:"rollingupdate" help:"Perform a rolling update of the given ReplicationController."`

	Run      runCmd      `cmd:"" aliases:"run-container" help:"Run an image as a replication controller or a pod (kubectl run)."`
	Expose   exposeCmd   `cmd:"" help:"Expose a replication controller, pod or service as a new service (kubectl expose)."`
	Describe describeCmd `cmd:"" help:"Show the details of a resource and its events (kubectl describe)."`
	Trace    traceCmd    `cmd:"" help:"Show an object's recent history as a tree of spans with start offsets and durations."`
	Explain  explainCmd  `cmd:"" help:"Say why an object is in its state: a pod's scheduling decision, an RC's last syncs, a node's conditions."`
	Stop     stopCmd     `cmd:"" help:"Scale a replication controller to 0, wait for its pods, then delete it (kubectl stop)."`
	Cordon   cordonCmd   `cmd:"" help:"Mark a node unschedulable (kubectl cordon)."`
	Uncordon uncordonCmd `cmd:"" help:"Mark a node schedulable (kubectl uncordon)."`
	Drain    drainCmd    `cmd:"" help:"Cordon a node and delete its pods (kubectl drain)."`

	Config      configCmd      `cmd:"" help:"Modify kubeconfig files (kubectl config)."`
	Namespace   namespaceCmd   `cmd:"" help:"Show or set the namespace of the current context (the book's kubectl namespace)."`
	APIVersions apiVersionsCmd `cmd:"" name:"api-versions" help:"Print the supported API versions on the server."`
	ClusterInfo clusterInfoCmd `cmd:"" name:"cluster-info" help:"Display the addresses of the master and cluster services."`

	Apply      applyCmd      `cmd:"" help:"Apply a configuration to resources from a file, directory or stdin (kubectl apply -f)."`
	Proxy      proxyCmd      `cmd:"" help:"Run a proxy to the API server that adds the kubeconfig's credentials (kubectl proxy)."`
	Completion completionCmd `cmd:"" help:"Print a shell completion script for bash, zsh or fish."`
	Complete   completeCmd   `cmd:"" name:"__complete" hidden:"" help:"Print completions for a partial command line (used by the completion scripts)."`
}

// Run parses args (args[0] is the program name) and runs the chosen command. It
// returns the process exit code.
func Run(args []string) int {
	return run(args, os.Stdout, os.Stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	if pause.Is(args[0]) { // the infra container of a pod, in the image the agent built
		return pause.Main(args[1:], stderr)
	}
	prog := programName(args[0])
	if prog == config.ControllerManager || prog == config.Scheduler {
		return bookMember(prog, args[1:], stdout, stderr)
	}
	var cli root
	exit := -1
	parser, err := kong.New(&cli,
		kong.Name(prog),
		kong.Description("An actor-model container orchestrator that speaks the Kubernetes v1 API."),
		kong.UsageOnError(),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
	)
	if err != nil {
		fmt.Fprintf(stderr, "kubeactor: %v\n", err)
		return 2
	}
	component, argv, warns := bookCommandLine(prog, normalizeFlags(args[1:]), parser.Model)
	ctx, err := parser.Parse(reorder(argv, flagArity(parser.Model), passthroughAt(parser.Model)))
	if exit >= 0 {
		return exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubeactor: %v\n", err)
		return 2
	}
	if cli.PrintVersion {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	log, closeLog, err := glogLogger(cli.Logging, cli.Glog, logName(prog, component), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kubeactor: %v\n", err)
		return 2
	}
	defer closeLog()
	logWarnings(log, logName(prog, component), warns)
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

// flagArity maps every spelling of the model's flags (--name, its aliases, -x) to
// whether it takes a value, so that reorder can tell a flag's value from an argument.
func flagArity(app *kong.Application) map[string]bool {
	takes := map[string]bool{}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, f := range n.Flags {
			v := !f.IsBool() && !f.IsCounter()
			takes["--"+f.Name] = v
			for _, a := range f.Aliases {
				takes["--"+a] = v
			}
			if f.Short != 0 {
				takes["-"+string(f.Short)] = v
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(app.Node)
	return takes
}

// passthroughAt maps each top-level command that ends in a passthrough argument
// (exec's command) to the number of arguments before it.
func passthroughAt(app *kong.Application) map[string]int {
	at := map[string]int{}
	for _, c := range app.Children {
		for i, p := range c.Positional {
			if p.Passthrough {
				at[c.Name] = i
			}
		}
	}
	return at
}

// reorder puts a command line in the order kong reads it: commands and arguments
// first, in their order, then every flag with its value. kubectl takes flags anywhere
// (`kubectl -s URL get pods -o wide web`, `label pods -l app=x env=prod`), while kong
// ends a list of arguments at the first flag and reads a command's flags only after
// the command. What follows "--" stays last, as it is, and so does a passthrough
// argument from its first word on: `exec POD -c CONTAINER date -u` (the book's form,
// kubectl 1.0's) runs `date -u`. A flag the model does not know is taken to have no
// separate value (kong then reports it).
func reorder(args []string, takes map[string]bool, passthrough map[string]int) []string {
	pos := make([]string, 0, len(args))
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = args[i:]
			i = len(args)
		case len(pos) > 0 && len(a) > 0 && a[0] != '-' && passes(passthrough, pos):
			rest = append([]string{"--"}, args[i:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takes[a] && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	return append(append(pos, flags...), rest...)
}

// passes tells whether the next argument of the command line begun with pos is its
// command's passthrough argument.
func passes(passthrough map[string]int, pos []string) bool {
	k, ok := passthrough[pos[0]]
	return ok && len(pos) == 1+k
}
