package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/config"
)

// programName is the name the binary was run under: one of the book's components
// (a link or a copy named kube-apiserver, kubelet, ...) or kubeactor.
func programName(arg0 string) string {
	base := filepath.Base(arg0)
	for _, c := range config.Components {
		if base == c {
			return c
		}
	}
	return "kubeactor"
}

// componentCommand is the kubeactor command line each component runs: the kubelet
// leaves services to kube-proxy, as in the book, and kube-proxy is v1.0's userspace
// proxy unless --proxy-mode says otherwise.
var componentCommand = map[string][]string{
	config.APIServer: {"server", "--allow-members"}, // kube-controller-manager and kube-scheduler may join it
	config.Kubelet:   {"agent", "--proxy-mode=none"},
	config.KubeProxy: {"proxy", "--proxy-mode=userspace"},
}

// bookCommandLine turns the command line of the program prog (flags in the '-'
// spelling) into kubeactor's, and tells which component's flags it takes (""
// for the client's): kube-apiserver's for `server` and `up`, the kubelet's for
// `agent`, kube-proxy's for `proxy --proxy-mode`, kubectl's for the rest. The
// book's flags that have no effect here are taken out, with a warning each.
func bookCommandLine(prog string, args []string, app *kong.Application) (string, []string, []config.Warning) {
	component := ""
	if cmd, ok := componentCommand[prog]; ok {
		component = prog
		args = append(append([]string(nil), cmd...), args...)
	}
	cmd := commandOf(args, flagArity(app))
	if component == "" {
		switch {
		case cmd == "server" || cmd == "up":
			component = config.APIServer
		case cmd == "agent":
			component = config.Kubelet
		case cmd == "proxy" && hasFlag(args, "proxy-mode"):
			component = config.KubeProxy
		}
	}
	known := commandFlags(app, cmd)
	flagsOf := component
	if component == "" { // kubectl, or kubeactor's client commands
		flagsOf = config.Kubectl
	}
	out, warns := config.BookArgs(flagsOf, args, func(name string) bool { return known[name] })
	return component, out, warns
}

// commandOf is the first argument that is not a flag or a flag's value.
func commandOf(args []string, takes map[string]bool) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "-"):
			if !strings.Contains(a, "=") && takes[a] {
				i++
			}
		default:
			return a
		}
	}
	return ""
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}

// commandFlags is the set of long flag names (and aliases) the top-level command
// cmd takes, with the global ones.
func commandFlags(app *kong.Application, cmd string) map[string]bool {
	known := map[string]bool{}
	add := func(n *kong.Node) {
		for _, f := range n.Flags {
			known[f.Name] = true
			for _, a := range f.Aliases {
				known[a] = true
			}
		}
	}
	add(app.Node)
	for _, c := range app.Children {
		if c.Name == cmd || slices.Contains(c.Aliases, cmd) {
			add(c)
		}
	}
	return known
}

// logWarnings logs one line for each flag that has no effect here.
func logWarnings(log *logrus.Logger, component string, warns []config.Warning) {
	for _, w := range warns {
		log.WithFields(logrus.Fields{"component": component, "flag": w.Flag, "reason": w.Reason}).Warn("flag has no effect here")
	}
}

// logName is the name of a command's log file in --log-dir.
func logName(prog, component string) string {
	if component != "" {
		return component
	}
	return prog
}

// insideAPIServer is kube-controller-manager and kube-scheduler without --master
// (with it they join the control plane as members: member.go): their work is done
// by actors inside kube-apiserver (kubeactor server), so they check their flags (the
// book's, and the logging ones), say so in one line, and exit 0. The flags that
// kube-apiserver honours are named in the line, to be moved there.
func insideAPIServer(prog string, args []string, stdout, stderr io.Writer) int {
	var flags struct {
		config.Logging
		config.Glog
	}
	exit := -1
	parser, err := kong.New(&flags, kong.Name(prog),
		kong.Description(prog+" runs inside kube-apiserver (kubeactor server): this command checks its flags and exits."),
		kong.UsageOnError(), kong.Writers(stdout, stderr), kong.Exit(func(code int) { exit = code }))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	args = normalizeFlags(args)
	rest, warns := config.BookArgs(prog, args, func(string) bool { return false })
	_, err = parser.Parse(rest)
	if exit >= 0 {
		return exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	if flags.PrintVersion {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	log, done, err := glogLogger(flags.Logging, flags.Glog, prog, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	defer done()
	var move, drop []string
	server := apiServerFlags()
	for _, w := range warns {
		if server[strings.TrimPrefix(w.Flag, "--")] {
			move = append(move, w.Flag)
		} else {
			drop = append(drop, w.Flag)
		}
	}
	sort.Strings(move)
	sort.Strings(drop)
	log.WithFields(logrus.Fields{
		"component":           prog,
		"runs-in":             config.APIServer,
		"give-kube-apiserver": strings.Join(move, " "),
		"no-effect":           strings.Join(drop, " "),
	}).Warn("nothing to start: the controllers and the scheduler run inside kube-apiserver")
	return 0
}

// apiServerFlags is the set of flags kube-apiserver (kubeactor server) honours.
func apiServerFlags() map[string]bool {
	var cli root
	parser, err := kong.New(&cli, kong.Name("kubeactor"))
	if err != nil {
		return nil
	}
	return commandFlags(parser.Model, "server")
}

// versionLine is what --version prints, as `kubeactor version --client` does.
func versionLine() string {
	return fmt.Sprintf("kubeactor %s (Kubernetes API v1, compatible with v1.0.0)", Version)
}
