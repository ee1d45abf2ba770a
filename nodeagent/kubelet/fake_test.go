package kubelet

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// fakeEngine is an in-memory container engine for the agent's tests: containers are
// created, started, stopped and removed as the agent asks, and a test makes them
// exit with exit.
type fakeEngine struct {
	mu     sync.Mutex
	n      int
	cs     map[string]*runtime.Container
	images map[string]bool
	subs   []chan runtime.Event

	imports []imported
	removed []string // image ids

	// registry, when set, is a fake registry: image to the "user:password" its pull
	// needs. pulls records each pull tried, as "image user".
	registry map[string]string
	pulls    []string

	// lists counts the ListContainers calls, inspects the InspectContainer calls by
	// container id.
	lists    int
	inspects map[string]int
}

func newFakeEngine(images ...string) *fakeEngine {
	e := &fakeEngine{cs: map[string]*runtime.Container{}, images: map[string]bool{}, inspects: map[string]int{}}
	for _, i := range images {
		e.images[i] = true
	}
	return e
}

func (e *fakeEngine) emit(c *runtime.Container, action string) {
	for _, s := range e.subs {
		select {
		case s <- runtime.Event{ContainerID: c.ID, Action: action, Labels: maps.Clone(c.Labels)}:
		default:
		}
	}
}

func (e *fakeEngine) Info(context.Context) (runtime.Info, error) {
	return runtime.Info{Version: "20.10.0-fake", KernelVersion: "6.0", OperatingSystem: "fake", NCPU: 2, MemTotal: 4 << 30}, nil
}

func (e *fakeEngine) ListContainers(_ context.Context, labels map[string]string) ([]runtime.Container, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lists++
	var out []runtime.Container
	for _, c := range e.cs {
		match := true
		for k, v := range labels {
			match = match && c.Labels[k] == v
		}
		if match {
			out = append(out, *c)
		}
	}
	return out, nil
}

func (e *fakeEngine) InspectContainer(_ context.Context, id string) (runtime.Container, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inspects[id]++
	c, ok := e.cs[id]
	if !ok {
		return runtime.Container{}, runtime.NotFound("container " + id)
	}
	return *c, nil
}

func (e *fakeEngine) CreateContainer(_ context.Context, cfg runtime.ContainerConfig) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.images[cfg.Image] {
		return "", runtime.NotFound("image " + cfg.Image)
	}
	e.n++
	id := fmt.Sprintf("c%04d", e.n)
	c := &runtime.Container{ID: id, Name: cfg.Name, Image: cfg.Image, ImageID: "sha256:" + cfg.Image,
		Labels: maps.Clone(cfg.Labels), State: runtime.StateCreated, CreatedAt: time.Now()}
	if !strings.HasPrefix(cfg.NetworkMode, "container:") {
		c.IP = fmt.Sprintf("10.1.0.%d", e.n)
	}
	e.cs[id] = c
	return id, nil
}

// calls is how often the agent has listed the engine's containers, and inspected
// each container (by id).
func (e *fakeEngine) calls() (lists int, inspects map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lists, maps.Clone(e.inspects)
}

func (e *fakeEngine) StartContainer(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.cs[id]
	if !ok {
		return runtime.NotFound("container " + id)
	}
	c.State, c.StartedAt, c.PID = runtime.StateRunning, time.Now(), 1000+e.n
	e.emit(c, "start")
	return nil
}

func (e *fakeEngine) StopContainer(_ context.Context, id string, _ time.Duration) error {
	e.exit(id, 0)
	return nil
}

// exit ends a running container with code.
func (e *fakeEngine) exit(id string, code int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.cs[id]; ok && c.State == runtime.StateRunning {
		c.State, c.ExitCode, c.FinishedAt, c.PID = runtime.StateExited, code, time.Now(), 0
		e.emit(c, "die")
	}
}

func (e *fakeEngine) RemoveContainer(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.cs[id]; !ok {
		return runtime.NotFound("container " + id)
	}
	delete(e.cs, id)
	return nil
}

func (e *fakeEngine) InspectImage(_ context.Context, ref string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.images[ref] {
		return "", runtime.NotFound("image " + ref)
	}
	return "sha256:" + ref, nil
}

func (e *fakeEngine) PullImage(_ context.Context, ref string, auth *runtime.RegistryAuth) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	need, ok := e.registry[ref]
	if !ok {
		return errors.New("no registry")
	}
	user := ""
	if auth != nil {
		user = auth.Username
	}
	e.pulls = append(e.pulls, ref+" "+user)
	if auth == nil {
		return errors.New("no basic auth credentials")
	}
	if auth.Username+":"+auth.Password != need {
		return errors.New("unauthorized: authentication required")
	}
	e.images[ref] = true
	return nil
}

func (e *fakeEngine) Logs(context.Context, string, runtime.LogOptions, io.Writer, io.Writer) error {
	return nil
}

func (e *fakeEngine) Exec(context.Context, string, runtime.ExecOptions) (int, error) { return 0, nil }

func (e *fakeEngine) Stats(context.Context, string) (runtime.Stats, error) {
	return runtime.Stats{}, nil
}

func (e *fakeEngine) Events(ctx context.Context) (<-chan runtime.Event, <-chan error) {
	ch, errs := make(chan runtime.Event, 64), make(chan error, 1)
	e.mu.Lock()
	e.subs = append(e.subs, ch)
	e.mu.Unlock()
	go func() {
		<-ctx.Done()
		errs <- ctx.Err()
	}()
	return ch, errs
}

// imported is one ImportImage call.
type imported struct {
	ref     string
	files   map[string]int64 // name → size in the tar stream
	changes []string
}

func (e *fakeEngine) ImportImage(_ context.Context, ref string, rootfs io.Reader, changes []string) error {
	files := map[string]int64{}
	tr := tar.NewReader(rootfs)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, tr)
		if err != nil {
			return err
		}
		files[h.Name] = n
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.images[ref] = true
	e.imports = append(e.imports, imported{ref, files, changes})
	return nil
}

func (e *fakeEngine) ListImages(context.Context) ([]runtime.Image, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []runtime.Image
	for ref := range e.images {
		out = append(out, runtime.Image{ID: "sha256:" + ref, Tags: []string{ref}, Size: 1 << 20})
	}
	return out, nil
}

func (e *fakeEngine) RemoveImage(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ref := strings.TrimPrefix(id, "sha256:")
	if !e.images[ref] {
		return runtime.NotFound("image " + id)
	}
	delete(e.images, ref)
	e.removed = append(e.removed, id)
	return nil
}
