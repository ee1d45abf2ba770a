package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/docker/docker/pkg/stdcopy"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
	"github.com/kubeactor/kubeactor/nodeagent/spans"
)

// Engine is the runtime.Runtime backed by the local Docker engine (DOCKER_HOST or the
// default unix socket). It is safe for concurrent use.
type Engine struct {
	cli *client.Client
}

var (
	_ runtime.Runtime = (*Engine)(nil)
	_ runtime.Images  = (*Engine)(nil)
)

// New connects lazily to the engine named by the environment, negotiating
// the API version on first use.
func New() (*Engine, error) {
	// The client would trace each of its HTTP calls below the agent's span (a list
	// and an inspect per sync, with their URLs); the agent's own spans (spans.Child)
	// name the calls worth reading.
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation(),
		client.WithTraceProvider(noop.NewTracerProvider()))
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return &Engine{cli: cli}, nil
}

// Close releases the client's connections.
func (d *Engine) Close() error { return d.cli.Close() }

// notFoundAs turns Docker's "no such container/image" into runtime.NotFound(what).
func notFoundAs(what string, err error) error {
	if cerrdefs.IsNotFound(err) {
		return runtime.NotFound(what)
	}
	return err
}

// Info reports the engine's version and the machine's.
func (d *Engine) Info(ctx context.Context) (runtime.Info, error) {
	v, err := d.cli.ServerVersion(ctx)
	if err != nil {
		return runtime.Info{}, fmt.Errorf("docker version: %w", err)
	}
	i, err := d.cli.Info(ctx)
	if err != nil {
		return runtime.Info{}, fmt.Errorf("docker info: %w", err)
	}
	kernel := v.KernelVersion
	if kernel == "" {
		kernel = i.KernelVersion
	}
	return runtime.Info{
		Version:         v.Version,
		APIVersion:      v.APIVersion,
		KernelVersion:   kernel,
		OperatingSystem: i.OperatingSystem,
		NCPU:            i.NCPU,
		MemTotal:        i.MemTotal,
		ID:              i.ID,
		RootDir:         i.DockerRootDir,
	}, nil
}

// ListContainers lists every container, running or not, that carries all labels.
func (d *Engine) ListContainers(ctx context.Context, labels map[string]string) ([]runtime.Container, error) {
	f := filters.NewArgs()
	for k, v := range labels {
		f.Add("label", k+"="+v)
	}
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]runtime.Container, 0, len(list))
	for _, s := range list {
		out = append(out, fromSummary(s))
	}
	return out, nil
}

// InspectContainer returns the container's full state.
func (d *Engine) InspectContainer(ctx context.Context, id string) (runtime.Container, error) {
	r, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		return runtime.Container{}, fmt.Errorf("inspect container %s: %w", id, notFoundAs("container "+id, err))
	}
	return fromInspect(r), nil
}

// CreateContainer creates (does not start) a container; see dockerCreateSpec for
// how the config maps. A missing image is an IsNotFound error.
func (d *Engine) CreateContainer(ctx context.Context, cfg runtime.ContainerConfig) (id string, err error) {
	ctx, sp := spans.Child(ctx, "container create", attribute.String("container.name", cfg.Name), attribute.String("image", cfg.Image))
	defer func() {
		if err == nil && sp.IsRecording() {
			sp.SetAttributes(attribute.String("container.id", id))
		}
		spans.End(sp, err)
	}()
	spec, err := dockerCreateSpec(cfg)
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.Name, err)
	}
	r, err := d.cli.ContainerCreate(ctx, spec.Config, spec.HostConfig, nil, nil, cfg.Name)
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.Name, notFoundAs("image "+cfg.Image, err))
	}
	return r.ID, nil
}

// StartContainer starts a created (or stopped) container.
func (d *Engine) StartContainer(ctx context.Context, id string) (err error) {
	ctx, sp := spans.Child(ctx, "container start", attribute.String("container.id", id))
	defer func() { spans.End(sp, err) }()
	if err := d.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return fmt.Errorf("start container %s: %w", id, notFoundAs("container "+id, err))
	}
	return nil
}

// StopContainer sends the container's stop signal (SIGTERM by default), then
// SIGKILL once grace (rounded up to whole seconds) has passed. Stopping a stopped
// container succeeds. ctx must outlive grace.
func (d *Engine) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	secs := 0
	if grace > 0 {
		secs = int(math.Ceil(grace.Seconds()))
	}
	if err := d.cli.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}); err != nil {
		return fmt.Errorf("stop container %s: %w", id, notFoundAs("container "+id, err))
	}
	return nil
}

// RemoveContainer kills the container if it runs and removes it with its
// anonymous volumes. A removal already under way counts as done.
func (d *Engine) RemoveContainer(ctx context.Context, id string) error {
	err := d.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil {
		if cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress") {
			return nil
		}
		return fmt.Errorf("remove container %s: %w", id, notFoundAs("container "+id, err))
	}
	return nil
}

// InspectImage returns a local image's id.
func (d *Engine) InspectImage(ctx context.Context, ref string) (string, error) {
	r, err := d.cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", ref, notFoundAs("image "+ref, err))
	}
	return r.ID, nil
}

// PullImage pulls ref, with auth as the registry credential when it is not nil, and
// reads the engine's progress stream to its end: the engine reports a failed pull
// inside the stream, not as the request's status.
func (d *Engine) PullImage(ctx context.Context, ref string, auth *runtime.RegistryAuth) (err error) {
	ctx, sp := spans.Child(ctx, "image pull", attribute.String("image", ref))
	defer func() { spans.End(sp, err) }()
	var opts image.PullOptions
	if auth != nil {
		enc, err := registry.EncodeAuthConfig(registry.AuthConfig{
			Username:      auth.Username,
			Password:      auth.Password,
			Email:         auth.Email,
			ServerAddress: auth.ServerAddress,
		})
		if err != nil {
			return fmt.Errorf("pull image %s: encode registry auth: %w", ref, err)
		}
		opts.RegistryAuth = enc
	}
	rc, err := d.cli.ImagePull(ctx, ref, opts)
	if err != nil {
		return fmt.Errorf("pull image %s: %w", ref, err)
	}
	defer rc.Close()
	if err := pullStreamError(rc); err != nil {
		return fmt.Errorf("pull image %s: %w", ref, err)
	}
	return nil
}

// ImportImage creates ref from the root filesystem in the tar stream rootfs, with
// the Dockerfile instructions in changes, and reads the engine's answer to its end
// (a failure may be reported inside it).
func (d *Engine) ImportImage(ctx context.Context, ref string, rootfs io.Reader, changes []string) error {
	rc, err := d.cli.ImageImport(ctx, image.ImportSource{Source: rootfs, SourceName: "-"}, ref, image.ImportOptions{Changes: changes})
	if err != nil {
		return fmt.Errorf("import image %s: %w", ref, err)
	}
	defer rc.Close()
	if err := pullStreamError(rc); err != nil {
		return fmt.Errorf("import image %s: %w", ref, err)
	}
	return nil
}

// ListImages lists the engine's images (not the intermediate layers).
func (d *Engine) ListImages(ctx context.Context) ([]runtime.Image, error) {
	list, err := d.cli.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	out := make([]runtime.Image, 0, len(list))
	for _, s := range list {
		var tags []string
		for _, t := range s.RepoTags {
			if t != "<none>:<none>" {
				tags = append(tags, t)
			}
		}
		out = append(out, runtime.Image{ID: s.ID, Tags: tags, Size: s.Size, Created: time.Unix(s.Created, 0).UTC()})
	}
	return out, nil
}

// RemoveImage removes an image and its tags, one tag at a time (the engine refuses
// to remove by id an image with several tags, unless forced); an image that a
// container uses, running or not, is refused by the engine.
func (d *Engine) RemoveImage(ctx context.Context, id string) error {
	r, err := d.cli.ImageInspect(ctx, id)
	if err != nil {
		return fmt.Errorf("remove image %s: %w", id, notFoundAs("image "+id, err))
	}
	refs := append(append([]string(nil), r.RepoTags...), r.ID)
	for i, ref := range refs {
		_, err := d.cli.ImageRemove(ctx, ref, image.RemoveOptions{PruneChildren: true})
		if err != nil && !(cerrdefs.IsNotFound(err) && i == len(refs)-1) {
			return fmt.Errorf("remove image %s: %w", ref, notFoundAs("image "+ref, err))
		}
	}
	return nil
}

// pullStreamError reads a pull's JSON progress stream and returns the error it
// reports, if any.
func pullStreamError(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read pull progress: %w", err)
		}
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
	}
}

// Logs copies the container's output, split into stdout and stderr unless the
// container has a terminal (then everything goes to stdout). A nil writer
// discards. When ctx ends while following, Logs returns nil.
func (d *Engine) Logs(ctx context.Context, id string, opts runtime.LogOptions, stdout, stderr io.Writer) error {
	r, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		return fmt.Errorf("logs of %s: %w", id, notFoundAs("container "+id, err))
	}
	tty := r.Config != nil && r.Config.Tty
	rc, err := d.cli.ContainerLogs(ctx, id, container.LogsOptions{
		ShowStdout: true,
		ShowStderr: true,
		Follow:     opts.Follow,
		Tail:       dockerTail(opts.Tail),
		Timestamps: opts.Timestamps,
		Since:      dockerSince(opts.Since),
	})
	if err != nil {
		return fmt.Errorf("logs of %s: %w", id, notFoundAs("container "+id, err))
	}
	defer rc.Close()
	if err := copyOutput(tty, orDiscard(stdout), orDiscard(stderr), rc); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("logs of %s: %w", id, err)
	}
	return nil
}

// copyOutput copies an attach or log stream: raw with a terminal, otherwise
// Docker's multiplexed frames split into the two writers.
func copyOutput(tty bool, stdout, stderr io.Writer, r io.Reader) error {
	var err error
	if tty {
		_, err = io.Copy(stdout, r)
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, r)
	}
	return err
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// Exec runs a command in a running container, streaming its input and output,
// and returns its exit code. The stdin copy ends when opts.Stdin does; Exec does
// not wait for it once the command's output has ended.
func (d *Engine) Exec(ctx context.Context, id string, opts runtime.ExecOptions) (int, error) {
	created, err := d.cli.ContainerExecCreate(ctx, id, container.ExecOptions{
		Cmd:          opts.Cmd,
		Tty:          opts.TTY,
		AttachStdin:  opts.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return 0, fmt.Errorf("exec in %s: %w", id, notFoundAs("container "+id, err))
	}
	execID := created.ID
	hj, err := d.cli.ContainerExecAttach(ctx, execID, container.ExecAttachOptions{Tty: opts.TTY})
	if err != nil {
		return 0, fmt.Errorf("exec in %s: attach: %w", id, err)
	}
	defer hj.Close()

	done := make(chan struct{})
	defer close(done)
	// Unblock the output copy when ctx ends.
	go func() {
		select {
		case <-ctx.Done():
			hj.Close()
		case <-done:
		}
	}()
	if opts.Stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, opts.Stdin)
			_ = hj.CloseWrite()
		}()
	}
	if opts.TTY && opts.Resize != nil {
		go forwardResizes(ctx, opts.Resize, done, func(ctx context.Context, o container.ResizeOptions) error {
			return d.cli.ContainerExecResize(ctx, execID, o)
		})
	}

	if err := copyOutput(opts.TTY, orDiscard(opts.Stdout), orDiscard(opts.Stderr), hj.Reader); err != nil && ctx.Err() == nil {
		return 0, fmt.Errorf("exec in %s: output: %w", id, err)
	}
	return d.execExitCode(ctx, execID)
}

// forwardResizes applies terminal size changes (to an exec or an attached container,
// with resize) until the channel closes or the session ends. A failed resize (the
// process may just have exited) is not fatal.
func forwardResizes(ctx context.Context, sizes <-chan runtime.TermSize, done <-chan struct{},
	resize func(context.Context, container.ResizeOptions) error) {
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case s, ok := <-sizes:
			if !ok {
				return
			}
			_ = resize(ctx, container.ResizeOptions{Height: uint(s.Height), Width: uint(s.Width)})
		}
	}
}

// execExitCode waits for the engine to record the exec's end: its output stream
// can close a moment before the engine marks it stopped.
func (d *Engine) execExitCode(ctx context.Context, execID string) (int, error) {
	wait := 5 * time.Millisecond
	for {
		r, err := d.cli.ContainerExecInspect(ctx, execID)
		if err != nil {
			return 0, fmt.Errorf("exec %s: inspect: %w", execID, err)
		}
		if !r.Running {
			return r.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("exec %s: %w", execID, ctx.Err())
		case <-time.After(wait):
		}
		if wait < 200*time.Millisecond {
			wait *= 2
		}
	}
}

// Stats takes one sample of the container's usage without waiting for a second
// one (the engine's one-shot mode).
func (d *Engine) Stats(ctx context.Context, id string) (runtime.Stats, error) {
	r, err := d.cli.ContainerStatsOneShot(ctx, id)
	if err != nil {
		return runtime.Stats{}, fmt.Errorf("stats of %s: %w", id, notFoundAs("container "+id, err))
	}
	defer r.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		return runtime.Stats{}, fmt.Errorf("stats of %s: decode: %w", id, err)
	}
	return fromStats(s), nil
}

// Events streams container events until ctx ends. The error channel receives one
// error (ctx's when it ended) and the event channel is then closed.
func (d *Engine) Events(ctx context.Context) (<-chan runtime.Event, <-chan error) {
	out := make(chan runtime.Event, 64)
	errc := make(chan error, 1)
	msgs, errs := d.cli.Events(ctx, events.ListOptions{
		Filters: filters.NewArgs(filters.Arg("type", string(events.ContainerEventType))),
	})
	go func() {
		defer close(out)
		for {
			select {
			case m := <-msgs:
				select {
				case out <- fromEvent(m):
				case <-ctx.Done():
					errc <- ctx.Err()
					return
				}
			case err := <-errs:
				if err == nil {
					err = errors.New("docker events: stream ended")
				}
				errc <- fmt.Errorf("docker events: %w", err)
				return
			}
		}
	}()
	return out, errc
}
