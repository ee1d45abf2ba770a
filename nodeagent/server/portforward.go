package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// PortForwardProtocols are the sub-protocols port-forward accepts.
var PortForwardProtocols = portforward.SupportedProtocols

// forwarder connects port-forward streams to one pod's address.
type forwarder struct{ ip string }

var _ portforward.PortForwarder = forwarder{}

// PortForward dials ip:port and copies both ways until either side ends.
func (f forwarder) PortForward(ctx context.Context, _, _ string, port int32, stream io.ReadWriteCloser) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(f.ip, strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("dial port %d of the pod: %w", port, err)
	}
	defer conn.Close()
	defer stream.Close()
	toPod, fromPod := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, stream)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // the client is done sending; the pod may still answer
		}
		toPod <- err
	}()
	go func() {
		_, err := io.Copy(stream, conn)
		fromPod <- err
	}()
	select {
	case err = <-fromPod:
	case err = <-toPod:
		if err == nil {
			select {
			case err = <-fromPod:
			case <-ctx.Done():
			}
		}
	case <-ctx.Done():
	}
	if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("forward port %d: %w", port, err)
	}
	return nil
}

// servePortForward answers /portForward/{ns}/{pod}[/{uid}].
func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, errors.New("port-forward takes GET or POST"))
		return
	}
	pp, ok := parsePodPath(r.PathValue("path"), false)
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("expected /portForward/{namespace}/{pod}"))
		return
	}
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	ip, err := s.cfg.Host.PodIP(pp.namespace, pp.pod)
	if err != nil {
		writeError(w, errorCode(err), fmt.Errorf("pod %s/%s: %w", pp.namespace, pp.pod, err))
		return
	}
	if ip == "" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("pod %s/%s has no IP address yet", pp.namespace, pp.pod))
		return
	}
	portforward.ServePortForward(w, r, forwarder{ip: ip}, pp.pod, pp.uid, opts,
		streamIdleTimeout, remotecommand.DefaultStreamCreationTimeout, PortForwardProtocols)
}
