package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// ExecProtocols are the SPDY sub-protocols exec accepts, newest first.
var ExecProtocols = remotecommand.SupportedStreamingProtocols

// executor runs one exec session in a resolved container.
type executor struct {
	rt runtime.Runtime
	id string
}

var _ remotecommand.Executor = executor{}

// ExecInContainer runs cmd through the runtime; a non-zero exit becomes an
// exec.ExitError, which ServeExec reports to the client as the exit code.
func (e executor) ExecInContainer(ctx context.Context, _, _, _ string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	opts := runtime.ExecOptions{Cmd: cmd, TTY: tty}
	ss := openSession(in, out, errOut, tty, resize)
	defer ss.close()
	opts.Stdin, opts.Stdout, opts.Stderr, opts.Resize = ss.stdin, ss.stdout, ss.stderr, ss.resize
	code, err := e.rt.Exec(ctx, e.id, opts)
	if err != nil {
		return err
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	return nil
}

// session is a remotecommand session's streams as the runtime takes them: a stream
// the client did not ask for stays a nil interface (the runtime tests for nil), and
// terminal sizes are relayed until close.
type session struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	resize         <-chan runtime.TermSize
	done           chan struct{}
}

func openSession(in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) *session {
	ss := &session{}
	if in != nil {
		ss.stdin = in
	}
	if out != nil {
		ss.stdout = out
	}
	if errOut != nil {
		ss.stderr = errOut
	}
	if tty && resize != nil {
		sizes := make(chan runtime.TermSize)
		ss.resize, ss.done = sizes, make(chan struct{})
		go relayResize(resize, sizes, ss.done)
	}
	return ss
}

// close ends the relay of terminal sizes.
func (ss *session) close() {
	if ss.done != nil {
		close(ss.done)
	}
}

// relayResize converts terminal sizes until the session ends.
func relayResize(in <-chan remotecommand.TerminalSize, out chan<- runtime.TermSize, done <-chan struct{}) {
	defer close(out)
	for {
		select {
		case <-done:
			return
		case sz, ok := <-in:
			if !ok {
				return
			}
			select {
			case out <- runtime.TermSize{Width: sz.Width, Height: sz.Height}:
			case <-done:
				return
			}
		}
	}
}

// serveExec answers /exec/{ns}/{pod}[/{uid}]/{container}: it upgrades to SPDY or
// WebSocket and runs the command.
func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, errors.New("exec takes GET or POST"))
		return
	}
	pp, ok := parsePodPath(r.PathValue("path"), true)
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("expected /exec/{namespace}/{pod}/{container}"))
		return
	}
	er, err := parseExecQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	id, ok := s.resolve(w, pp, false)
	if !ok {
		return
	}
	opts := &remotecommand.Options{Stdin: er.stdin, Stdout: er.stdout, Stderr: er.stderr, TTY: er.tty}
	remotecommand.ServeExec(w, r, executor{rt: s.cfg.Runtime, id: id}, pp.pod, pp.uid, pp.container, er.cmd, opts,
		streamIdleTimeout, remotecommand.DefaultStreamCreationTimeout, ExecProtocols)
}

// lockedBuffer collects combined output from two writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// serveRun answers POST /run/{ns}/{pod}[/{uid}]/{container}?cmd=...: it runs the
// command (split on spaces, as the v1.0 kubelet did) and answers its combined output.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	pp, ok := parsePodPath(r.PathValue("path"), true)
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("expected /run/{namespace}/{pod}/{container}"))
		return
	}
	cmd := strings.Fields(r.FormValue("cmd"))
	if len(cmd) == 0 {
		writeError(w, http.StatusBadRequest, errors.New("cmd is required"))
		return
	}
	id, ok := s.resolve(w, pp, false)
	if !ok {
		return
	}
	var out lockedBuffer
	if _, err := s.cfg.Runtime.Exec(r.Context(), id, runtime.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &out}); err != nil {
		writeError(w, errorCode(err), fmt.Errorf("run in %s/%s %s: %w", pp.namespace, pp.pod, pp.container, err))
		return
	}
	writeText(w, http.StatusOK, out.buf.String())
}
