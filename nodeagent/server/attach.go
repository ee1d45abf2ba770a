package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// attacher attaches one session to a resolved container's main process.
type attacher struct {
	rt runtime.Attacher
	id string
}

var _ remotecommand.Attacher = attacher{}

// AttachContainer copies the session's streams to and from the container.
func (a attacher) AttachContainer(ctx context.Context, _, _, _ string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	ss := openSession(in, out, errOut, tty, resize)
	defer ss.close()
	return a.rt.Attach(ctx, a.id, runtime.AttachOptions{Stdin: ss.stdin, Stdout: ss.stdout, Stderr: ss.stderr, Resize: ss.resize})
}

// serveAttach answers /attach/{ns}/{pod}[/{uid}]/{container}: it upgrades to SPDY
// or WebSocket and attaches to the container's stdio.
func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, errors.New("attach takes GET or POST"))
		return
	}
	pp, ok := parsePodPath(r.PathValue("path"), true)
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("expected /attach/{namespace}/{pod}/{container}"))
		return
	}
	ar, err := parseAttachQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	rt, ok := s.cfg.Runtime.(runtime.Attacher)
	if !ok {
		writeError(w, http.StatusNotImplemented, fmt.Errorf("the container runtime of node %s cannot attach", s.cfg.NodeName))
		return
	}
	id, ok := s.resolve(w, pp, false)
	if !ok {
		return
	}
	opts := &remotecommand.Options{Stdin: ar.stdin, Stdout: ar.stdout, Stderr: ar.stderr, TTY: ar.tty}
	remotecommand.ServeAttach(w, r, attacher{rt: rt, id: id}, pp.pod, pp.uid, pp.container, opts,
		streamIdleTimeout, remotecommand.DefaultStreamCreationTimeout, ExecProtocols)
}
