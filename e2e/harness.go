package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary returns the kubeactor binary under test: $KUBEACTOR_BIN, or one built once
// into a temporary directory.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("KUBEACTOR_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubeactor-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "kubeactor")
		cmd := exec.Command("go", "build", "-o", builtBin, "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build kubeactor: %v", buildErr)
	}
	return builtBin
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// Server is one running `kubeactor server` process.
type Server struct {
	URL        string // http://127.0.0.1:port
	SecureURL  string // https://127.0.0.1:port ("" with --secure-port -1)
	DataDir    string
	Kubeconfig string

	t    testing.TB
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	logs bytes.Buffer
}

// StartServer starts a server on a free loopback port with its data in dataDir
// (a fresh temporary directory when empty) and waits until it is ready.
func StartServer(t testing.TB, dataDir string, extra ...string) *Server {
	t.Helper()
	return start(t, "server", dataDir, extra...)
}

// StartUp is StartServer for `kubeactor up`, the quick start's command.
func StartUp(t testing.TB, dataDir string, extra ...string) *Server {
	t.Helper()
	return start(t, "up", dataDir, extra...)
}

func start(t testing.TB, command, dataDir string, extra ...string) *Server {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	s := &Server{DataDir: dataDir, t: t, done: make(chan struct{})}
	// Both ports on free loopback ports: tests run side by side.
	args := append([]string{command, "--data-dir", dataDir, "--insecure-port", "0", "--secure-port", "0", "--bind-address", "127.0.0.1", "--log-format", "json"}, extra...)
	s.cmd = exec.Command(Binary(t), args...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	addr := make(chan [2]string, 1)
	go s.readLogs(stderr, addr)
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("server log:\n%s", s.Logs())
		}
	})
	select {
	case a := <-addr:
		s.URL = "http://" + a[0]
		if a[1] != "" {
			s.SecureURL = "https://" + a[1]
		}
	case <-s.done:
		t.Fatalf("server exited before serving:\n%s", s.Logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("server did not start within 60s:\n%s", s.Logs())
	}
	s.Kubeconfig = writeKubeconfig(t, s.URL)
	Eventually(t, 30*time.Second, "server ready", func() error { return readyz(s.URL) })
	return s
}

// readyz tells whether the API server at url answers /readyz with 200.
func readyz(url string) error {
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

func (s *Server) readLogs(r io.Reader, addr chan<- [2]string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Bytes()
		s.mu.Lock()
		s.logs.Write(line)
		s.logs.WriteByte('\n')
		s.mu.Unlock()
		if sent {
			continue
		}
		var rec struct {
			Msg     string `json:"msg"`
			Address string `json:"address"`
			Secure  string `json:"secure-address"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "serving" && rec.Address != "" {
			addr <- [2]string{rec.Address, rec.Secure}
			sent = true
		}
	}
}

// Logs returns what the server has logged so far.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Kill stops the server with SIGKILL, as a crash would, and waits for it to exit.
func (s *Server) Kill() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-s.done
}

// Stop asks the server to shut down with SIGTERM and waits for it.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.t.Errorf("server did not stop within 30s of SIGTERM")
		s.Kill()
	}
}

func writeKubeconfig(t testing.TB, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubeactor
  cluster:
    server: %s
contexts:
- name: kubeactor
  context:
    cluster: kubeactor
    namespace: default
current-context: kubeactor
users: []
`, url)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Result is what one kubectl run printed.
type Result struct {
	Stdout, Stderr string
	Err            error
}

// Kubectl runs the installed kubectl against the server with stdin (may be empty).
func (s *Server) Kubectl(stdin string, args ...string) Result {
	return s.runClient("kubectl", stdin, append([]string{"--kubeconfig", s.Kubeconfig}, args...))
}

// runClient runs a client program (kubectl, or kubeactor's client commands) against
// the server with its kubeconfig and a home directory of its own.
func (s *Server) runClient(program, stdin string, args []string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(s.Kubeconfig), "KUBECACHEDIR="+filepath.Join(filepath.Dir(s.Kubeconfig), "cache"))
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return Result{Stdout: out.String(), Stderr: errb.String(), Err: err}
}

// MustKubectl runs kubectl and fails the test when it exits non-zero.
func (s *Server) MustKubectl(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	r := s.Kubectl(stdin, args...)
	if r.Err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// Eventually polls check until it returns nil or the deadline passes.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := 10 * time.Millisecond
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %v", what, timeout, err)
		}
		<-time.After(wait)
		if wait < 200*time.Millisecond {
			wait *= 2
		}
	}
}

// Background is a long-running kubectl (for example `get -w`), killed at cleanup.
type Background struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (b *Background) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.Write(p)
}

// Output returns what the command printed so far (stdout and stderr).
func (b *Background) Output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

// StartKubectl starts kubectl in the background; it is killed when the test ends.
func (s *Server) StartKubectl(t testing.TB, args ...string) *Background {
	t.Helper()
	return s.startClient(t, "kubectl", args...)
}

// StartKubeactor starts a kubeactor client command in the background; it is killed
// when the test ends.
func (s *Server) StartKubeactor(t testing.TB, args ...string) *Background {
	t.Helper()
	return s.startClient(t, Binary(t), args...)
}

// startClient runs a client program against the server in the background.
func (s *Server) startClient(t testing.TB, program string, args ...string) *Background {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, program, append([]string{"--kubeconfig", s.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(s.Kubeconfig))
	b := &Background{}
	cmd.Stdout, cmd.Stderr = b, b
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", program, err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	return b
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
