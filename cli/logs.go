package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

type logsCmd struct {
	clientFlags
	Container  string        `short:"c" name:"container" help:"Print the logs of this container."`
	Follow     bool          `short:"f" name:"follow" help:"Specify if the logs should be streamed."`
	Previous   bool          `short:"p" name:"previous" help:"Print the logs of the previous instance of the container."`
	Tail       int64         `name:"tail" default:"-1" help:"Lines of recent log to display; -1 for all."`
	Timestamps bool          `name:"timestamps" help:"Include timestamps on each line."`
	Since      time.Duration `name:"since" help:"Only logs newer than a relative duration like 5s, 2m, or 3h."`
	Args       []string      `arg:"" name:"pod" help:"POD [CONTAINER]."`
}

func (c *logsCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return report(g.stderr, c.run(ctx, g.stdout))
}

// options is the PodLogOptions the flags ask for.
func (c *logsCmd) options() (*corev1.PodLogOptions, error) {
	if len(c.Args) > 2 {
		return nil, fmt.Errorf("expected POD [CONTAINER], got %d arguments", len(c.Args))
	}
	o := &corev1.PodLogOptions{Container: c.Container, Follow: c.Follow, Previous: c.Previous, Timestamps: c.Timestamps}
	if len(c.Args) == 2 {
		if c.Container != "" && c.Container != c.Args[1] {
			return nil, fmt.Errorf("container given twice: -c %s and %s", c.Container, c.Args[1])
		}
		o.Container = c.Args[1]
	}
	if c.Tail >= 0 {
		tail := c.Tail
		o.TailLines = &tail
	}
	if c.Since > 0 {
		secs := int64((c.Since + time.Second - 1) / time.Second)
		o.SinceSeconds = &secs
	}
	return o, nil
}

// run streams the pod's log to out.
func (c *logsCmd) run(ctx context.Context, out io.Writer) error {
	pod, err := podName(c.Args[0])
	if err != nil {
		return err
	}
	opts, err := c.options()
	if err != nil {
		return err
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	rc, err := cn.rest.Get().Namespace(cn.namespace).Resource("pods").Name(pod).SubResource("log").
		VersionedParams(opts, scheme.ParameterCodec).Stream(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(out, rc); err != nil && ctx.Err() == nil {
		return fmt.Errorf("read log: %w", err)
	}
	return nil
}

// podName takes a pod as kubectl does: NAME, or pod/NAME (also pods/ and po/).
func podName(arg string) (string, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok {
		return arg, nil
	}
	switch strings.ToLower(kind) {
	case "pod", "pods", "po":
		if name != "" {
			return name, nil
		}
	}
	return "", fmt.Errorf("%q: only pods are supported here (NAME or pod/NAME)", arg)
}
