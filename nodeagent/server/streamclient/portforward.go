package streamclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
)

// The port-forward sub-protocol.
const portForwardProtocol = "portforward.k8s.io"

// Forward is one forwarded port: a local listener and the pod's port.
type Forward struct {
	Listener net.Listener
	Remote   uint16
}

// PortForward opens one SPDY connection on d and, until ctx ends or the connection
// closes, forwards each connection accepted on a listener to its pod port. errOut
// gets one line per failed connection. It closes the listeners when it returns.
func PortForward(ctx context.Context, d httpstream.Dialer, forwards []Forward, errOut io.Writer) error {
	defer func() {
		for _, f := range forwards {
			_ = f.Listener.Close()
		}
	}()
	conn, proto, err := d.Dial(portForwardProtocol)
	if err != nil {
		return fmt.Errorf("upgrade connection: %w", err)
	}
	defer conn.Close()
	if proto != portForwardProtocol {
		return fmt.Errorf("the server chose protocol %q, this client speaks %q", proto, portForwardProtocol)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		nextID atomic.Int64
		mu     sync.Mutex // errOut
		wg     sync.WaitGroup
	)
	report := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(errOut, "E %v\n", err)
	}
	for _, f := range forwards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				local, err := f.Listener.Accept()
				if err != nil {
					return // closed
				}
				id := nextID.Add(1) - 1
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := forwardOne(conn, local, f.Remote, id); err != nil {
						report(err)
					}
				}()
			}
		}()
	}
	select {
	case <-ctx.Done():
	case <-conn.CloseChan():
	}
	for _, f := range forwards {
		_ = f.Listener.Close()
	}
	_ = conn.Close()
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("lost connection to pod")
}

// forwardOne copies one local connection to and from a new stream pair.
func forwardOne(conn httpstream.Connection, local net.Conn, port uint16, id int64) error {
	defer local.Close()
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, strconv.Itoa(int(port)))
	h.Set(corev1.PortForwardRequestIDHeader, strconv.FormatInt(id, 10))
	errStream, err := conn.CreateStream(h)
	if err != nil {
		return fmt.Errorf("create error stream for port %d: %w", port, err)
	}
	_ = errStream.Close() // nothing to send on it
	defer conn.RemoveStreams(errStream)
	failed := make(chan error, 1)
	go func() {
		msg, err := io.ReadAll(errStream)
		switch {
		case err != nil:
			failed <- fmt.Errorf("read error stream for port %d: %w", port, err)
		case len(msg) > 0:
			failed <- fmt.Errorf("an error occurred forwarding %d: %s", port, msg)
		}
		close(failed)
	}()
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(h)
	if err != nil {
		return fmt.Errorf("create data stream for port %d: %w", port, err)
	}
	defer conn.RemoveStreams(data)
	fromPod := make(chan struct{})
	go func() {
		_, _ = io.Copy(local, data)
		close(fromPod)
	}()
	go func() {
		_, _ = io.Copy(data, local)
		_ = data.Close() // half-close: the pod sees the end of our input
	}()
	select {
	case <-fromPod:
	case err := <-failed:
		if err != nil {
			return err
		}
		<-fromPod
	}
	return <-failed
}
