package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
	file *os.File // the run's copy of the log (runlogs.go); nil when not kept
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
	s, err := launch(t, command, dataDir, extra...)
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "server ready", func() error { return readyz(s.URL) })
	return s
}

// launch starts a server process and waits until it serves (not until it is ready):
// an error says it exited first or took too long, with its log.
func launch(t testing.TB, command, dataDir string, extra ...string) (*Server, error) {
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
	s.file = runLogFile(t, command)
	if s.file != nil {
		s.cmd.Stdout = s.file
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	addr := make(chan [2]string, 1)
	logged := make(chan struct{})
	go func() { s.readLogs(stderr, addr); close(logged) }()
	go func() {
		_ = s.cmd.Wait()
		<-logged
		if s.file != nil {
			_ = s.file.Close()
		}
		close(s.done)
	}()
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
		return s, fmt.Errorf("server exited before serving:\n%s", s.Logs())
	case <-time.After(60 * time.Second):
		return s, fmt.Errorf("server did not start within 60s:\n%s", s.Logs())
	}
	s.Kubeconfig = writeKubeconfig(t, s.URL)
	return s, nil
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
		if s.file != nil {
			_, _ = s.file.Write(append(append(make([]byte, 0, len(line)+1), line...), '\n'))
		}
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
	home := filepath.Dir(s.Kubeconfig)
	return runCommand([]string{"HOME=" + home, "KUBECACHEDIR=" + filepath.Join(home, "cache")}, stdin, program, args...)
}

// runCommand runs program with the environment plus env, stdin given, within a minute.
func runCommand(env []string, stdin, program string, args ...string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = append(os.Environ(), env...)
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
	return mustSucceed(t, s.Kubectl(stdin, args...), args)
}

// mustSucceed is r's output, or the test's end when kubectl (args) exited non-zero.
func mustSucceed(t testing.TB, r Result, args []string) string {
	t.Helper()
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

// Replica is one `kubeactor server` of a replicated cluster (issue 13).
type Replica struct {
	*Server
	Name        string
	PeerAddress string
	args        []string // the server's flags after the harness's own (Restart)
}

// errNoReplication is what a server logs when its store refuses replication (until
// the Raft-replicated store is built).
const errNoReplication = "replication is not built"

// StartReplicas starts n replicas m1..mn as processes, on free loopback ports (API,
// secure and peer), each with its own data directory and all told the same
// --initial-cluster; it waits until every one is ready (has a leader and, on the
// leader, a running control plane). The test is skipped while the store refuses
// replication.
func StartReplicas(t testing.TB, n int, extra ...string) []*Replica {
	t.Helper()
	return StartReplicasRouted(t, n, nil, extra...)
}

// StartReplicasRouted is StartReplicas where replica from reaches replica to at
// route(from, to, to's peer address) (a proxy made by the test, say): each replica's
// --initial-cluster names its own peer address and the routes to the others. A nil
// route is the direct one.
func StartReplicasRouted(t testing.TB, n int, route func(from, to int, addr string) string, extra ...string) []*Replica {
	t.Helper()
	rs := make([]*Replica, n)
	for i := range rs {
		rs[i] = &Replica{Name: fmt.Sprintf("m%d", i+1), PeerAddress: freeLoopbackAddr(t)}
	}
	clusters := make([]string, n)
	for i := range rs {
		var cluster []string
		for j, r := range rs {
			addr := r.PeerAddress
			if route != nil && i != j {
				addr = route(i, j, addr)
			}
			cluster = append(cluster, r.Name+"="+addr)
		}
		clusters[i] = strings.Join(cluster, ",")
	}
	type launched struct {
		i   int
		s   *Server
		err error
	}
	out := make(chan launched, n)
	for i, r := range rs {
		args := append([]string{"--name", r.Name, "--peer-address", r.PeerAddress, "--initial-cluster", clusters[i], "--dns-port", "0"}, extra...)
		r.args = args
		go func() {
			s, err := launch(t, "server", "", args...)
			out <- launched{i, s, err}
		}()
	}
	var errs []error
	for range rs {
		l := <-out
		rs[l.i].Server = l.s
		if l.err != nil {
			errs = append(errs, l.err)
		}
	}
	for _, err := range errs {
		if strings.Contains(err.Error(), errNoReplication) {
			t.Skipf("the store refuses replication: %s (the lead runs this once it is built)", errNoReplication)
		}
	}
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	for _, r := range rs {
		Eventually(t, 60*time.Second, r.Name+" ready", func() error { return readyz(r.URL) })
	}
	return rs
}

// Restart starts the (killed or stopped) replica again, with its data directory and
// flags, and waits until it serves; it does not wait for /readyz (see WaitReady). A
// replica never started (Server nil) starts with a fresh data directory.
func (r *Replica) Restart(t testing.TB) {
	t.Helper()
	dir := ""
	if r.Server != nil {
		dir = r.DataDir
	}
	s, err := launch(t, "server", dir, r.args...)
	if err != nil {
		t.Fatal(err)
	}
	r.Server = s
}

// WaitReady waits until the replica's /readyz is 200.
func (r *Replica) WaitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, r.Name+" ready", func() error { return readyz(r.URL) })
}

// ReplicaURLs is the comma-separated list of the replicas' API URLs (--server a,b,c).
func ReplicaURLs(rs []*Replica) string {
	urls := make([]string, 0, len(rs))
	for _, r := range rs {
		urls = append(urls, r.URL)
	}
	return strings.Join(urls, ",")
}

// Leader asks the replicas in turn who leads (GET /kubeactor/v1/members) and returns
// that replica once one answers with a leader among rs.
func Leader(t testing.TB, rs []*Replica) *Replica {
	t.Helper()
	var leader *Replica
	Eventually(t, 30*time.Second, "a leader", func() error {
		for _, r := range rs {
			name, err := leaderName(r.URL)
			if err != nil {
				continue
			}
			for _, c := range rs {
				if c.Name == name {
					leader = c
					return nil
				}
			}
		}
		return errors.New("no replica names a leader")
	})
	return leader
}

// leaderName is the leader's name as the replica at url lists its members.
func leaderName(url string) (string, error) {
	resp, err := http.Get(url + "/kubeactor/v1/members")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var list struct {
		Items []struct {
			Name string `json:"name"`
			Role string `json:"role"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", err
	}
	for _, m := range list.Items {
		if m.Role == "leader" {
			return m.Name, nil
		}
	}
	return "", errors.New("no leader")
}

// freeLoopbackAddr is a loopback host:port free right now.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
