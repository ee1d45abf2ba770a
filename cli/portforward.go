package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/kubeactor/kubeactor/nodeagent/server/streamclient"
)

type portForwardCmd struct {
	clientFlags
	Address string   `name:"address" default:"127.0.0.1" help:"The local address to listen on."`
	Pod     string   `arg:"" name:"pod" help:"The pod."`
	Ports   []string `arg:"" name:"ports" help:"[LOCAL_PORT:]REMOTE_PORT..."`
}

func (c *portForwardCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return report(g.stderr, c.run(ctx, g.stdout, g.stderr))
}

// portPair is one LOCAL:REMOTE argument; local 0 picks a free port.
type portPair struct{ local, remote uint16 }

// parsePortPairs reads kubectl's forms: "8080", "8080:80", ":80".
func parsePortPairs(args []string) ([]portPair, error) {
	out := make([]portPair, 0, len(args))
	for _, a := range args {
		local, remote, found := strings.Cut(a, ":")
		if !found {
			remote = local
		}
		r, err := strconv.ParseUint(remote, 10, 16)
		if err != nil || r == 0 {
			return nil, fmt.Errorf("error parsing remote port %q in %q", remote, a)
		}
		var l uint64
		if local != "" {
			if l, err = strconv.ParseUint(local, 10, 16); err != nil {
				return nil, fmt.Errorf("error parsing local port %q in %q", local, a)
			}
		}
		out = append(out, portPair{local: uint16(l), remote: uint16(r)})
	}
	return out, nil
}

// run listens on the local ports and forwards until ctx ends.
func (c *portForwardCmd) run(ctx context.Context, out, errOut io.Writer) error {
	pod, err := podName(c.Pod)
	if err != nil {
		return err
	}
	pairs, err := parsePortPairs(c.Ports)
	if err != nil {
		return err
	}
	if len(pairs) == 0 {
		return fmt.Errorf("at least 1 PORT is required for port-forward")
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	forwards := make([]streamclient.Forward, 0, len(pairs))
	for _, p := range pairs {
		ln, err := net.Listen("tcp", net.JoinHostPort(c.Address, strconv.Itoa(int(p.local))))
		if err != nil {
			for _, f := range forwards {
				_ = f.Listener.Close()
			}
			return fmt.Errorf("unable to listen on port %d: %w", p.local, err)
		}
		forwards = append(forwards, streamclient.Forward{Listener: ln, Remote: p.remote})
	}
	u := cn.rest.Post().Namespace(cn.namespace).Resource("pods").Name(pod).SubResource("portforward").URL()
	d, err := streamclient.NewDialer(cn.config, "POST", u)
	if err != nil {
		return err
	}
	for _, f := range forwards {
		fmt.Fprintf(out, "Forwarding from %s -> %d\n", f.Listener.Addr(), f.Remote)
	}
	return streamclient.PortForward(ctx, d, forwards, errOut)
}
