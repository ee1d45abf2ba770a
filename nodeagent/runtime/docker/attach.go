package docker

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/container"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

var _ runtime.Attacher = (*Engine)(nil)

// Attach attaches to the main process of a running container: opts.Stdin goes to
// its stdin (the container must have been created with Stdin), its output to
// opts.Stdout and opts.Stderr (one stream when it has a terminal). It returns when
// the output ends (the container stopped), when ctx ends, or, with no output
// stream asked for, when the input ends. When the input ends, the engine closes
// the container's stdin if it was created with StdinOnce and has no terminal;
// otherwise it ends the attachment (as `docker attach` does).
func (d *Engine) Attach(ctx context.Context, id string, opts runtime.AttachOptions) error {
	info, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		return fmt.Errorf("attach to %s: %w", id, notFoundAs("container "+id, err))
	}
	if info.State == nil || !info.State.Running {
		return fmt.Errorf("attach to %s: the container is not running", id)
	}
	tty := info.Config != nil && info.Config.Tty
	if opts.Stdin != nil && (info.Config == nil || !info.Config.OpenStdin) {
		return fmt.Errorf("attach to %s: the container was not created with stdin open (stdin: true)", id)
	}
	wantOut := opts.Stdout != nil || (opts.Stderr != nil && !tty)
	hj, err := d.cli.ContainerAttach(ctx, id, container.AttachOptions{
		Stream: true,
		Stdin:  opts.Stdin != nil,
		Stdout: opts.Stdout != nil,
		Stderr: opts.Stderr != nil && !tty,
	})
	if err != nil {
		return fmt.Errorf("attach to %s: %w", id, notFoundAs("container "+id, err))
	}
	defer hj.Close()

	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			hj.Close()
		case <-done:
		}
	}()
	if tty && opts.Resize != nil {
		go forwardResizes(ctx, opts.Resize, done, func(ctx context.Context, o container.ResizeOptions) error {
			return d.cli.ContainerResize(ctx, id, o)
		})
	}
	inDone := make(chan error, 1)
	if opts.Stdin != nil {
		go func() {
			_, err := io.Copy(hj.Conn, opts.Stdin)
			_ = hj.CloseWrite()
			inDone <- err
		}()
	}
	if !wantOut {
		select {
		case err := <-inDone:
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("attach to %s: input: %w", id, err)
			}
		case <-ctx.Done():
		}
		return nil
	}
	err = copyOutput(tty, orDiscard(opts.Stdout), orDiscard(opts.Stderr), hj.Reader)
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("attach to %s: output: %w", id, err)
	}
	return nil
}
