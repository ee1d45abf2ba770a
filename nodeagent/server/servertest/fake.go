package servertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// errUnsupported answers the runtime calls the server never makes.
var errUnsupported = errors.New("servertest: not supported by the fake runtime")

// Container is a fake container: its past output and, while it runs, a feed of new
// lines that followers get.
type Container struct {
	ID    string
	Log   string // output so far
	Stats runtime.Stats
	// Feed, when not nil, gives lines written after Log while following; closing it
	// stops the container.
	Feed chan string
}

// Runtime is a fake runtime.Runtime. Exec understands a few commands:
// "echo ARGS..." (stdout), "warn ARGS..." (stderr), "cat" (stdin to stdout) and
// "exit N".
type Runtime struct {
	mu         sync.Mutex
	containers map[string]*Container
	Machine    runtime.Info // what Info answers
}

var _ runtime.Runtime = (*Runtime)(nil)

// NewRuntime returns a fake runtime holding cs.
func NewRuntime(cs ...*Container) *Runtime {
	r := &Runtime{containers: map[string]*Container{}, Machine: runtime.Info{
		Version: "20.10.24", APIVersion: "1.41", KernelVersion: "6.1.0", OperatingSystem: "Debian GNU/Linux 12 (bookworm)",
		NCPU: 2, MemTotal: 4 << 30, ID: "machine-1",
	}}
	for _, c := range cs {
		r.containers[c.ID] = c
	}
	return r
}

func (r *Runtime) get(id string) (*Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return nil, runtime.NotFound("container " + id)
	}
	return c, nil
}

func (r *Runtime) Info(context.Context) (runtime.Info, error) { return r.Machine, nil }

func (r *Runtime) ListContainers(context.Context, map[string]string) ([]runtime.Container, error) {
	return nil, errUnsupported
}
func (r *Runtime) InspectContainer(context.Context, string) (runtime.Container, error) {
	return runtime.Container{}, errUnsupported
}
func (r *Runtime) CreateContainer(context.Context, runtime.ContainerConfig) (string, error) {
	return "", errUnsupported
}
func (r *Runtime) StartContainer(context.Context, string) error { return errUnsupported }
func (r *Runtime) StopContainer(context.Context, string, time.Duration) error {
	return errUnsupported
}
func (r *Runtime) RemoveContainer(context.Context, string) error        { return errUnsupported }
func (r *Runtime) InspectImage(context.Context, string) (string, error) { return "", errUnsupported }
func (r *Runtime) PullImage(context.Context, string, *runtime.RegistryAuth) error {
	return errUnsupported
}
func (r *Runtime) Events(context.Context) (<-chan runtime.Event, <-chan error) {
	errs := make(chan error, 1)
	errs <- errUnsupported
	return nil, errs
}

func (r *Runtime) Stats(_ context.Context, id string) (runtime.Stats, error) {
	c, err := r.get(id)
	if err != nil {
		return runtime.Stats{}, err
	}
	return c.Stats, nil
}

// Logs writes Log (its last Tail lines, each prefixed with a fixed timestamp when
// asked), then with Follow the Feed's lines until ctx ends or the feed closes.
func (r *Runtime) Logs(ctx context.Context, id string, opts runtime.LogOptions, stdout, _ io.Writer) error {
	c, err := r.get(id)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(c.Log, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if opts.Tail >= 0 && int(opts.Tail) < len(lines) {
		lines = lines[len(lines)-int(opts.Tail):]
	}
	write := func(l string) error {
		if opts.Timestamps {
			l = "2015-07-10T00:00:00.000000000Z " + l
		}
		_, err := io.WriteString(stdout, l)
		return err
	}
	for _, l := range lines {
		if err := write(l); err != nil {
			return err
		}
	}
	if !opts.Follow || c.Feed == nil {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case l, ok := <-c.Feed:
			if !ok {
				return nil
			}
			if err := write(l); err != nil {
				return err
			}
		}
	}
}

// Exec runs one of the fake's commands.
func (r *Runtime) Exec(_ context.Context, id string, opts runtime.ExecOptions) (int, error) {
	if _, err := r.get(id); err != nil {
		return 0, err
	}
	out, errOut := opts.Stdout, opts.Stderr
	if out == nil {
		out = io.Discard
	}
	if errOut == nil || opts.TTY {
		errOut = out
	}
	if len(opts.Cmd) == 0 {
		return 0, errors.New("no command")
	}
	args := strings.Join(opts.Cmd[1:], " ")
	switch opts.Cmd[0] {
	case "echo":
		_, err := fmt.Fprintln(out, args)
		return 0, err
	case "warn":
		_, err := fmt.Fprintln(errOut, args)
		return 0, err
	case "cat":
		if opts.Stdin == nil {
			return 0, nil
		}
		_, err := io.Copy(out, opts.Stdin)
		return 0, err
	case "exit":
		code, err := strconv.Atoi(args)
		if err != nil {
			return 0, fmt.Errorf("exit: %w", err)
		}
		fmt.Fprintf(errOut, "exiting with %d\n", code)
		return code, nil
	}
	fmt.Fprintf(errOut, "%s: not found\n", opts.Cmd[0])
	return 127, nil
}

// Host is a fake server.Host.
type Host struct {
	PodList []*corev1.Pod
	// IDs maps "namespace/pod/container" to engine ids, oldest first.
	IDs map[string][]string
	IPs map[string]string // "namespace/pod" to the pod's address
}

func (h *Host) Pods() []*corev1.Pod { return h.PodList }

func (h *Host) ContainerID(namespace, pod, container string, previous bool) (string, error) {
	ids := h.IDs[namespace+"/"+pod+"/"+container]
	n := len(ids) - 1
	if previous {
		n--
	}
	if n < 0 {
		what := "container " + container
		if previous {
			what = "previous terminated container " + container
		}
		return "", runtime.NotFound(what)
	}
	return ids[n], nil
}

func (h *Host) PodIP(namespace, pod string) (string, error) {
	ip, ok := h.IPs[namespace+"/"+pod]
	if !ok {
		return "", runtime.NotFound("pod " + namespace + "/" + pod)
	}
	return ip, nil
}

// EchoRoundTrip sends msg over a new TCP connection to addr, closes its write side
// and fails t unless the same bytes come back: a check of a forwarded echo server.
func EchoRoundTrip(t testing.TB, addr, msg string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != msg {
		t.Fatalf("echo %q, %v; want %q", got, err, msg)
	}
}
