package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	utilexec "k8s.io/utils/exec"

	"github.com/kubeactor/kubeactor/nodeagent/server/streamclient"
)

type execCmd struct {
	clientFlags
	Container string   `short:"c" name:"container" help:"Container name; defaults to the pod's only container."`
	Stdin     bool     `short:"i" name:"stdin" help:"Pass stdin to the container."`
	TTY       bool     `short:"t" name:"tty" help:"Stdin is a TTY."`
	Pod       string   `arg:"" name:"pod" help:"The pod."`
	Command   []string `arg:"" name:"command" passthrough:"" help:"-- COMMAND [ARGS...]."`
}

func (c *execCmd) Run(g *globals) error {
	err := c.run(context.Background(), os.Stdin, g.stdout, g.stderr)
	var exit utilexec.ExitError
	if errors.As(err, &exit) {
		return exitCode(exit.ExitStatus()) // kubectl exits with the command's code
	}
	return report(g.stderr, err)
}

// run execs the command in the pod through the API server.
func (c *execCmd) run(ctx context.Context, in io.Reader, out, errOut io.Writer) error {
	pod, err := podName(c.Pod)
	if err != nil {
		return err
	}
	cmd := c.Command
	if len(cmd) > 0 && cmd[0] == "--" {
		cmd = cmd[1:]
	}
	if len(cmd) == 0 {
		return errors.New("you must specify at least one command for the container")
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	if c.TTY && c.Stdin {
		// As kubectl: a terminal only when the input is one.
		if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if state, err := term.MakeRaw(int(f.Fd())); err == nil {
				defer func() { _ = term.Restore(int(f.Fd()), state) }()
			}
		} else {
			fmt.Fprintln(errOut, "Unable to use a TTY - input is not a terminal or the right kind of file")
			c.TTY = false
		}
	}
	opts := streamclient.ExecOptions{Stdout: out, Stderr: errOut, TTY: c.TTY}
	if c.Stdin {
		opts.Stdin = in
	}
	u := cn.rest.Post().Namespace(cn.namespace).Resource("pods").Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: c.Container, Command: cmd, Stdin: c.Stdin, Stdout: true, Stderr: !c.TTY, TTY: c.TTY}, scheme.ParameterCodec).URL()
	d, err := streamclient.NewDialer(cn.config, "POST", u)
	if err != nil {
		return err
	}
	return streamclient.Exec(ctx, d, opts)
}
