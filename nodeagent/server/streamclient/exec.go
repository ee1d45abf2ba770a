package streamclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	utilexec "k8s.io/utils/exec"
)

// The remote-command sub-protocol this client speaks (exit codes and resizing).
const execProtocol = "v4.channel.k8s.io"

// TermSize is a terminal size to send to an interactive session.
type TermSize struct {
	Width  uint16 `json:"Width"`
	Height uint16 `json:"Height"`
}

// ExecOptions are the local ends of a session. Nil streams are not opened; the
// request's query must ask for the same ones (stdin, stdout, stderr, tty).
type ExecOptions struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer // ignored with TTY
	TTY    bool
	Resize <-chan TermSize // nil unless TTY
}

// Exec runs a remote command session on d and returns when it ends. A command that
// exits non-zero gives a k8s.io/utils/exec.CodeExitError with its code.
func Exec(ctx context.Context, d httpstream.Dialer, opts ExecOptions) error {
	conn, proto, err := d.Dial(execProtocol)
	if err != nil {
		return fmt.Errorf("upgrade connection: %w", err)
	}
	defer conn.Close()
	if proto != execProtocol {
		return fmt.Errorf("the server chose protocol %q, this client speaks %q", proto, execProtocol)
	}
	create := func(kind string) (httpstream.Stream, error) {
		h := http.Header{}
		h.Set(corev1.StreamType, kind)
		s, err := conn.CreateStream(h)
		if err != nil {
			return nil, fmt.Errorf("create %s stream: %w", kind, err)
		}
		return s, nil
	}
	errStream, err := create(corev1.StreamTypeError)
	if err != nil {
		return err
	}
	var stdin, stdout, stderr, resize httpstream.Stream
	if opts.Stdin != nil {
		if stdin, err = create(corev1.StreamTypeStdin); err != nil {
			return err
		}
	}
	if opts.Stdout != nil {
		if stdout, err = create(corev1.StreamTypeStdout); err != nil {
			return err
		}
	}
	if opts.Stderr != nil && !opts.TTY {
		if stderr, err = create(corev1.StreamTypeStderr); err != nil {
			return err
		}
	}
	if opts.TTY {
		if resize, err = create(corev1.StreamTypeResize); err != nil {
			return err
		}
	}

	status := make(chan error, 1)
	go func() {
		msg, err := io.ReadAll(errStream)
		if err != nil {
			status <- fmt.Errorf("read error stream: %w", err)
			return
		}
		status <- decodeStatus(msg)
	}()
	done := make(chan struct{})
	defer close(done)
	if resize != nil && opts.Resize != nil {
		go sendResizes(resize, opts.Resize, done)
	}
	if stdin != nil {
		go func() {
			_, _ = io.Copy(stdin, opts.Stdin)
			_ = stdin.Close() // half-close: the command sees end of input
		}()
	}
	var wg sync.WaitGroup
	for _, p := range []struct {
		from io.Reader
		to   io.Writer
	}{{stdout, opts.Stdout}, {stderr, opts.Stderr}} {
		if p.from == nil || p.to == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(p.to, p.from)
		}()
	}
	copied := make(chan struct{})
	go func() { wg.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-status:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sendResizes writes each terminal size as JSON on the resize stream.
func sendResizes(w io.Writer, sizes <-chan TermSize, done <-chan struct{}) {
	enc := json.NewEncoder(w)
	for {
		select {
		case <-done:
			return
		case sz, ok := <-sizes:
			if !ok {
				return
			}
			if enc.Encode(&sz) != nil {
				return
			}
		}
	}
}

// decodeStatus reads the v4 error stream: nothing or a Success Status means success,
// a NonZeroExitCode Status an exit code.
func decodeStatus(msg []byte) error {
	if len(msg) == 0 {
		return nil
	}
	var st metav1.Status
	if err := json.Unmarshal(msg, &st); err != nil {
		return fmt.Errorf("error stream: %s", msg)
	}
	if st.Status == metav1.StatusSuccess {
		return nil
	}
	if st.Reason == "NonZeroExitCode" && st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type != "ExitCode" {
				continue
			}
			code, err := strconv.Atoi(c.Message)
			if err != nil {
				return fmt.Errorf("error stream: bad exit code %q", c.Message)
			}
			return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
		}
	}
	if st.Message == "" {
		return errors.New("remote command failed")
	}
	return errors.New(st.Message)
}
