package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// These tests drive the real local Docker engine with the images from
// images/build.sh (built on first use when missing). They skip only when the
// engine is unreachable.

const (
	testServerImage = "kubeactor/testserver:latest"
	busyboxImage    = "kubeactor/busybox:latest"
	testLabel       = "kubeactor.test/runtime"
)

var (
	imagesOnce sync.Once
	imagesErr  error
)

// newTestDocker returns a client to the engine, or skips the test when there is
// none, and makes sure the project's images exist.
func newTestDocker(t *testing.T) *Engine {
	t.Helper()
	d, err := New()
	if err != nil {
		t.Skipf("docker engine unreachable (client: %v)", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := d.Info(ctx); err != nil {
		t.Skipf("docker engine unreachable: %v", err)
	}
	imagesOnce.Do(func() { imagesErr = ensureImages(d) })
	if imagesErr != nil {
		t.Fatal(imagesErr)
	}
	return d
}

// ensureImages runs images/build.sh when one of the images is missing.
func ensureImages(d *Engine) error {
	ctx := context.Background()
	for _, ref := range []string{DefaultPauseImage, testServerImage, busyboxImage} {
		if _, err := d.InspectImage(ctx, ref); err != nil {
			if !runtime.IsNotFound(err) {
				return err
			}
			out, err := exec.Command("../../../images/build.sh").CombinedOutput()
			if err != nil {
				return fmt.Errorf("images/build.sh (needed for %s): %v\n%s", ref, err, out)
			}
			return nil
		}
	}
	return nil
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// uniqueName is a container name for this test: its name plus random bits.
func uniqueName(t *testing.T) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "rt_" + unsafeName.ReplaceAllString(t.Name(), "_") + "_" + hex.EncodeToString(b)
}

// run creates and (unless startIt is false) starts a container, removing it when
// the test ends.
func run(t *testing.T, d *Engine, cfg runtime.ContainerConfig, startIt bool) string {
	t.Helper()
	ctx := testCtx(t)
	if cfg.Name == "" {
		cfg.Name = uniqueName(t)
	}
	if cfg.Labels == nil {
		cfg.Labels = map[string]string{}
	}
	cfg.Labels[testLabel] = "true"
	id, err := d.CreateContainer(ctx, cfg)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := d.RemoveContainer(ctx, id); err != nil && !runtime.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
	if startIt {
		if err := d.StartContainer(ctx, id); err != nil {
			t.Fatalf("start: %v", err)
		}
	}
	return id
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	poll.Until(t, timeout, what, func() error {
		ok, err := cond()
		if ok {
			return nil
		}
		if err == nil {
			err = errors.New("not yet")
		}
		return err
	})
}

func waitExited(t *testing.T, d *Engine, id string) runtime.Container {
	t.Helper()
	var c runtime.Container
	waitFor(t, "container exit", 30*time.Second, func() (bool, error) {
		var err error
		c, err = d.InspectContainer(context.Background(), id)
		return err == nil && c.State == runtime.StateExited, err
	})
	return c
}

func httpGet(url string) (string, error) {
	cl := http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

func freePort(t *testing.T) int32 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

func TestDockerInfo(t *testing.T) {
	d := newTestDocker(t)
	info, err := d.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Version == "" || info.APIVersion == "" || info.KernelVersion == "" || info.OperatingSystem == "" ||
		info.NCPU <= 0 || info.MemTotal <= 0 || info.ID == "" {
		t.Errorf("incomplete info: %+v", info)
	}
}

// TestDockerTestServerLifecycle runs the test server with a host port: inspect,
// HTTP through the port, both log streams, stats, and a graceful stop.
func TestDockerTestServerLifecycle(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	ctx := testCtx(t)
	hostPort := freePort(t)
	id := run(t, d, runtime.ContainerConfig{
		Image:        testServerImage,
		Env:          []string{"GREETING=hello"},
		Labels:       map[string]string{"app": "web"},
		Hostname:     "web-0",
		PortBindings: []runtime.PortBinding{{ContainerPort: 8080, HostPort: hostPort, Protocol: "TCP"}},
	}, true)

	c, err := d.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || !c.Running() || c.PID <= 0 || c.IP == "" || c.Image != testServerImage ||
		!strings.HasPrefix(c.ImageID, "sha256:") || c.Labels["app"] != "web" || c.StartedAt.IsZero() || c.CreatedAt.IsZero() {
		t.Errorf("inspect running: %+v", c)
	}

	base := fmt.Sprintf("http://127.0.0.1:%d", hostPort)
	var body string
	waitFor(t, "test server through the host port", 20*time.Second, func() (bool, error) {
		body, err = httpGet(base + "/hostname")
		return err == nil, err
	})
	if strings.TrimSpace(body) != "web-0" {
		t.Errorf("hostname = %q, want web-0", body)
	}
	if body, err := httpGet("http://" + c.IP + ":8080/echo?msg=direct"); err != nil || strings.TrimSpace(body) != "direct" {
		t.Errorf("via pod IP: %q, %v", body, err)
	}
	if _, err := httpGet(base + "/no-such-endpoint"); err == nil {
		t.Errorf("unknown endpoint answered 200")
	}

	var stdout, stderr bytes.Buffer
	waitFor(t, "both log streams", 10*time.Second, func() (bool, error) {
		stdout.Reset()
		stderr.Reset()
		err := d.Logs(ctx, id, runtime.LogOptions{Tail: -1}, &stdout, &stderr)
		return strings.Contains(stdout.String(), "testserver listening on :8080") &&
			strings.Contains(stderr.String(), "no such endpoint"), err
	})
	if strings.Contains(stdout.String(), "testserver: error") {
		t.Errorf("stderr line on stdout: %q", stdout.String())
	}

	st, err := d.Stats(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.CPUUsageNanos == 0 || st.MemoryUsageBytes == 0 || st.MemoryLimitBytes == 0 || st.RxBytes == 0 || st.Time.IsZero() {
		t.Errorf("stats: %+v", st)
	}

	if err := d.StopContainer(ctx, id, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	c, err = d.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runtime.StateExited || c.ExitCode != 0 || c.FinishedAt.IsZero() || c.PID != 0 {
		t.Errorf("after stop: %+v", c)
	}
	stdout.Reset()
	if err := d.Logs(ctx, id, runtime.LogOptions{Tail: -1}, &stdout, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "testserver: SIGTERM") {
		t.Errorf("no SIGTERM line in %q", stdout.String())
	}
	// Stopping again and removing are idempotent until the container is gone.
	if err := d.StopContainer(ctx, id, time.Second); err != nil {
		t.Errorf("second stop: %v", err)
	}
	if err := d.RemoveContainer(ctx, id); err != nil {
		t.Errorf("remove: %v", err)
	}
	if err := d.RemoveContainer(ctx, id); !runtime.IsNotFound(err) {
		t.Errorf("second remove: %v, want NotFound", err)
	}
}

// TestDockerStopGrace checks the stop signal and the SIGKILL after the grace
// period.
func TestDockerStopGrace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      []string
		grace    time.Duration
		wantCode int
		wantLog  string
	}{
		{"exits on SIGTERM", nil, 10 * time.Second, 0, "testserver: SIGTERM\n"},
		{"killed after grace", []string{"IGNORE_SIGTERM=1"}, time.Second, 137, "testserver: SIGTERM ignored\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newTestDocker(t)
			ctx := testCtx(t)
			id := run(t, d, runtime.ContainerConfig{Image: testServerImage, Env: tt.env}, true)
			var out bytes.Buffer
			waitFor(t, "server start", 10*time.Second, func() (bool, error) {
				out.Reset()
				err := d.Logs(ctx, id, runtime.LogOptions{Tail: -1}, &out, nil)
				return strings.Contains(out.String(), "listening"), err
			})
			if err := d.StopContainer(ctx, id, tt.grace); err != nil {
				t.Fatal(err)
			}
			c, err := d.InspectContainer(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.State != runtime.StateExited || c.ExitCode != tt.wantCode || c.OOMKilled {
				t.Errorf("after stop: state %s code %d oom %v, want exited %d", c.State, c.ExitCode, c.OOMKilled, tt.wantCode)
			}
			out.Reset()
			if err := d.Logs(ctx, id, runtime.LogOptions{Tail: -1}, &out, nil); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantLog) {
				t.Errorf("logs %q lack %q", out.String(), tt.wantLog)
			}
		})
	}
}

// resizedScript waits (bounded) for the terminal to take the size the test sends,
// then prints it and a line on stderr.
const resizedScript = `i=0; while [ "$(stty size 2>/dev/null)" != "40 100" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; stty size; echo err >&2`

func TestDockerExec(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	id := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Entrypoint: []string{"sleep", "3600"}}, true)
	tests := []struct {
		name       string
		opts       runtime.ExecOptions
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{
			name:       "separate streams and exit code",
			opts:       runtime.ExecOptions{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}},
			wantCode:   3,
			wantStdout: "out\n",
			wantStderr: "err\n",
		},
		{
			name:       "stdin",
			opts:       runtime.ExecOptions{Cmd: []string{"sh", "-c", "tr a-z A-Z"}, Stdin: strings.NewReader("hello\n")},
			wantStdout: "HELLO\n",
		},
		{
			name:       "tty merges streams and applies resizes",
			opts:       runtime.ExecOptions{Cmd: []string{"sh", "-c", resizedScript}, TTY: true},
			wantStdout: "40 100\r\nerr\r\n",
		},
		{
			name:     "missing command",
			opts:     runtime.ExecOptions{Cmd: []string{"/no/such/binary"}},
			wantCode: 126,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			opts := tt.opts
			opts.Stdout, opts.Stderr = &stdout, &stderr
			if opts.TTY {
				sizes := make(chan runtime.TermSize, 1)
				sizes <- runtime.TermSize{Width: 100, Height: 40}
				opts.Resize = sizes
			}
			code, err := d.Exec(testCtx(t), id, opts)
			if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if tt.wantStdout != "" && stdout.String() != tt.wantStdout {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.wantStdout)
			}
			if tt.wantStderr != "" && stderr.String() != tt.wantStderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

func TestDockerLogsOptions(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	script := []string{"sh", "-c", "echo one; echo two; echo three >&2"}
	plain := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Entrypoint: script}, true)
	tty := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Entrypoint: script, TTY: true}, true)
	// Lines of the two streams may reach the log in either order; Tail is checked
	// on one stream.
	single := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Entrypoint: []string{"sh", "-c", "echo one; echo two; echo three"}}, true)
	waitExited(t, d, plain)
	waitExited(t, d, tty)
	waitExited(t, d, single)

	tests := []struct {
		name       string
		id         string
		opts       runtime.LogOptions
		wantStdout string
		wantStderr string
		stamped    bool
	}{
		{name: "all", id: plain, opts: runtime.LogOptions{Tail: -1}, wantStdout: "one\ntwo\n", wantStderr: "three\n"},
		{name: "tail", id: single, opts: runtime.LogOptions{Tail: 2}, wantStdout: "two\nthree\n"},
		{name: "tail zero", id: single, opts: runtime.LogOptions{Tail: 0}},
		{name: "since later", id: plain, opts: runtime.LogOptions{Tail: -1, Since: time.Now().Add(time.Hour)}},
		{name: "follow stopped", id: plain, opts: runtime.LogOptions{Tail: -1, Follow: true}, wantStdout: "one\ntwo\n", wantStderr: "three\n"},
		{name: "timestamps", id: plain, opts: runtime.LogOptions{Tail: -1, Timestamps: true}, stamped: true},
		{name: "tty", id: tty, opts: runtime.LogOptions{Tail: -1}, wantStdout: "one\r\ntwo\r\nthree\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := d.Logs(testCtx(t), tt.id, tt.opts, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			if tt.stamped {
				stamp := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z (one|two)$`)
				if n := len(stamp.FindAllString(stdout.String(), -1)); n != 2 {
					t.Errorf("want 2 stamped lines in %q, got %d", stdout.String(), n)
				}
				return
			}
			if stdout.String() != tt.wantStdout || stderr.String() != tt.wantStderr {
				t.Errorf("stdout %q stderr %q, want %q %q", stdout.String(), stderr.String(), tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

// TestDockerFollowEndsWithContainer follows a running container's logs: Logs
// returns once the container exits.
func TestDockerFollowEndsWithContainer(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	id := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Entrypoint: []string{"sh", "-c", "echo first; read x; echo second"}, Stdin: true}, true)
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- d.Logs(testCtx(t), id, runtime.LogOptions{Tail: -1, Follow: true}, &syncWriter{w: &stdout}, nil)
	}()
	// The script waits on stdin until the container is stopped.
	if err := d.StopContainer(testCtx(t), id, time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		if got := stdout.String(); got != "first\n" {
			t.Errorf("followed %q, want %q", got, "first\n")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("follow did not return after the container stopped")
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestDockerOOMKilled runs a process that allocates past the memory limit and
// expects the engine to report the OOM kill, in inspect and as an event.
func TestDockerOOMKilled(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	ctx := testCtx(t)
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs, _ := d.Events(evCtx)
	// dd allocates its block size in one buffer and fills it. It starts a
	// second after the container does, once the engine watches the container's
	// memory cgroup for OOM kills.
	id := run(t, d, runtime.ContainerConfig{
		Image:       busyboxImage,
		Entrypoint:  []string{"sh", "-c", "sleep 1; exec dd if=/dev/zero of=/dev/null bs=256M count=1"},
		MemoryLimit: 16 << 20,
	}, true)
	c := waitExited(t, d, id)
	if c.ExitCode != 137 {
		t.Fatalf("oom: exit code %d error=%q, want 137", c.ExitCode, c.Error)
	}
	// The engine handles containerd's OOM and exit events one after the other, and
	// the exit can come first: the container is then seen exited before it is marked
	// OOMKilled (seen on CI: exit 137 and OOMKilled false at the first inspect). The
	// agent re-inspects on the "oom" event for the same reason.
	poll.Until(t, 10*time.Second, "container marked OOMKilled", func() error {
		c, err := d.InspectContainer(context.Background(), id)
		if err != nil {
			return err
		}
		if !c.OOMKilled {
			return fmt.Errorf("exited %d, not marked OOMKilled", c.ExitCode)
		}
		return nil
	})
	for {
		select {
		case e := <-evs:
			if e.ContainerID == id && e.Action == "oom" {
				if e.Labels[testLabel] != "true" {
					t.Errorf("oom event labels %v", e.Labels)
				}
				return
			}
		case <-ctx.Done():
			t.Fatal("no oom event")
		}
	}
}

func TestDockerEvents(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	ctx := testCtx(t)
	evCtx, cancel := context.WithCancel(ctx)
	evs, errs := d.Events(evCtx)
	id := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Entrypoint: []string{"true"}, Labels: map[string]string{"pod": "p1"}}, true)
	waitExited(t, d, id)
	if err := d.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) == 0 || got[len(got)-1] != "destroy" {
		select {
		case e := <-evs:
			if e.ContainerID != id {
				continue
			}
			if e.Labels["pod"] != "p1" {
				t.Errorf("event %s labels %v", e.Action, e.Labels)
			}
			got = append(got, e.Action)
		case <-ctx.Done():
			t.Fatalf("events so far %v, no destroy", got)
		}
	}
	if want := []string{"create", "start", "die", "destroy"}; !isSubsequence(want, got) {
		t.Errorf("events %v, want in order %v", got, want)
	}
	cancel()
	select {
	case err := <-errs:
		if err == nil {
			t.Error("nil error after cancel")
		}
	case <-time.After(10 * time.Second):
		t.Error("no error after cancel")
	}
	for range evs { // closed after the error
	}
}

func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestDockerListByLabel(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	run1 := uniqueName(t)
	a := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Labels: map[string]string{"run": run1, "role": "a"}}, false)
	b := run(t, d, runtime.ContainerConfig{Image: busyboxImage, Labels: map[string]string{"run": run1, "role": "b"}}, false)
	tests := []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"one label", map[string]string{"run": run1}, []string{a, b}},
		{"two labels", map[string]string{"run": run1, "role": "b"}, []string{b}},
		{"no match", map[string]string{"run": run1, "role": "c"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := d.ListContainers(testCtx(t), tt.labels)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]runtime.Container{}
			for _, c := range list {
				got[c.ID] = c
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d containers, want %d", len(got), len(tt.want))
			}
			for _, id := range tt.want {
				c, ok := got[id]
				if !ok {
					t.Fatalf("%s missing", id)
				}
				if c.State != runtime.StateCreated || c.Image != busyboxImage || c.Name == "" || strings.HasPrefix(c.Name, "/") || c.Labels["run"] != run1 {
					t.Errorf("listed %+v", c)
				}
			}
		})
	}
}

// TestDockerSandboxJoin builds a pod the way the node agent does: a pause sandbox
// owning network, IPC, hostname and DNS, and a container joining it, with a
// read-only bind mount.
func TestDockerSandboxJoin(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	ctx := testCtx(t)
	sandbox := run(t, d, runtime.ContainerConfig{
		Image: DefaultPauseImage, Hostname: "pod-a", IPCMode: "shareable",
		DNS: []string{"10.0.0.10"}, DNSSearch: []string{"ns.svc.cluster.local"}, DNSOptions: []string{"ndots:5"},
	}, true)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	app := run(t, d, runtime.ContainerConfig{
		Image: busyboxImage, Entrypoint: []string{"sleep", "3600"},
		Hostname:    "ignored", // Docker rejects it with a shared network; it must be dropped
		NetworkMode: "container:" + sandbox, IPCMode: "container:" + sandbox,
		Mounts: []runtime.Mount{{Source: dir, Target: "/etc/secret-volume", ReadOnly: true}},
	}, true)
	sb, err := d.InspectContainer(ctx, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if sb.IP == "" {
		t.Fatalf("sandbox has no IP: %+v", sb)
	}

	tests := []struct {
		name     string
		cmd      string
		want     string
		wantCode int
	}{
		{"hostname from sandbox", "hostname", "pod-a\n", 0},
		{"dns from sandbox", "grep -c -e 'nameserver 10.0.0.10' -e 'search ns.svc.cluster.local' -e 'options ndots:5' /etc/resolv.conf", "3\n", 0},
		{"same network namespace", "ip -4 addr show eth0 | grep -o 'inet [0-9.]*'", "inet " + sb.IP + "\n", 0},
		{"bind mount", "cat /etc/secret-volume/secret", "s3cret", 0},
		{"bind mount read-only", "touch /etc/secret-volume/x", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code, err := d.Exec(testCtx(t), app, runtime.ExecOptions{Cmd: []string{"sh", "-c", tt.cmd}, Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode || (tt.want != "" && out.String() != tt.want) {
				t.Errorf("%s: code %d out %q, want %d %q", tt.cmd, code, out.String(), tt.wantCode, tt.want)
			}
		})
	}

	// The pause process exits 0 on SIGTERM, promptly.
	if err := d.StopContainer(ctx, sandbox, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if c, err := d.InspectContainer(ctx, sandbox); err != nil || c.ExitCode != 0 || c.State != runtime.StateExited {
		t.Errorf("pause after stop: %+v %v", c, err)
	}
}

func TestDockerNotFound(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	const missing = "kubeactor-no-such-container"
	tests := []struct {
		name string
		op   func(ctx context.Context) error
	}{
		{"inspect", func(ctx context.Context) error { _, err := d.InspectContainer(ctx, missing); return err }},
		{"start", func(ctx context.Context) error { return d.StartContainer(ctx, missing) }},
		{"stop", func(ctx context.Context) error { return d.StopContainer(ctx, missing, time.Second) }},
		{"remove", func(ctx context.Context) error { return d.RemoveContainer(ctx, missing) }},
		{"logs", func(ctx context.Context) error { return d.Logs(ctx, missing, runtime.LogOptions{Tail: -1}, nil, nil) }},
		{"exec", func(ctx context.Context) error {
			_, err := d.Exec(ctx, missing, runtime.ExecOptions{Cmd: []string{"true"}})
			return err
		}},
		{"stats", func(ctx context.Context) error { _, err := d.Stats(ctx, missing); return err }},
		{"inspect image", func(ctx context.Context) error {
			_, err := d.InspectImage(ctx, "kubeactor/no-such-image:v0")
			return err
		}},
		{"create from missing image", func(ctx context.Context) error {
			_, err := d.CreateContainer(ctx, runtime.ContainerConfig{Name: uniqueName(t), Image: "kubeactor/no-such-image:v0"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.op(testCtx(t)); !runtime.IsNotFound(err) {
				t.Errorf("err = %v, want IsNotFound", err)
			}
		})
	}
}

func TestDockerImages(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	ctx := testCtx(t)
	id, err := d.InspectImage(ctx, DefaultPauseImage)
	if err != nil || !strings.HasPrefix(id, "sha256:") {
		t.Errorf("inspect pause image: %q, %v", id, err)
	}
	// There is no registry: the pull must fail, quickly, with the engine's reason.
	err = d.PullImage(ctx, "kubeactor/no-such-image:v0", nil)
	if err == nil || !strings.Contains(err.Error(), "kubeactor/no-such-image:v0") {
		t.Errorf("pull: %v, want an error naming the image", err)
	}
}

// TestDockerSecurityContext runs containers with a pod's security settings: the
// process runs as the uid and gid asked, with the extra groups, and a dropped
// capability is gone.
func TestDockerSecurityContext(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	tests := []struct {
		name   string
		cfg    runtime.ContainerConfig
		script string
		want   string
	}{
		{name: "runAsUser", cfg: runtime.ContainerConfig{User: "1234"}, script: "id -u", want: "1234\n"},
		{name: "runAsUser and runAsGroup", cfg: runtime.ContainerConfig{User: "1234:5678"}, script: "id -u; id -g", want: "1234\n5678\n"},
		{name: "supplemental groups", cfg: runtime.ContainerConfig{User: "1234", GroupAdd: []string{"4000"}}, script: "id -G | tr ' ' '\\n' | grep -x 4000", want: "4000\n"},
		{name: "capability dropped", cfg: runtime.ContainerConfig{CapDrop: []string{"CHOWN"}}, script: "chown 1:1 /tmp && echo chowned || echo refused", want: "refused\n"},
		{name: "read-only root", cfg: runtime.ContainerConfig{ReadonlyRootfs: true}, script: "touch /x 2>/dev/null && echo wrote || echo refused", want: "refused\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Image, cfg.Entrypoint = busyboxImage, []string{"sh", "-c", tt.script}
			id := run(t, d, cfg, true)
			waitExited(t, d, id)
			var stdout, stderr bytes.Buffer
			if err := d.Logs(testCtx(t), id, runtime.LogOptions{Tail: -1}, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tt.want {
				t.Errorf("stdout %q stderr %q, want %q", stdout.String(), stderr.String(), tt.want)
			}
		})
	}
}
