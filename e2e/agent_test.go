package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Agent is one running `kubeactor agent` process.
type Agent struct {
	killed bool
	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	logs   bytes.Buffer
	file   *os.File // the run's copy of the log (runlogs.go); nil when not kept
}

// startAgent starts `kubeactor agent` against s with args; it is stopped (SIGTERM)
// when the test ends, and its log is shown if the test failed.
func startAgent(t testing.TB, s *Server, args ...string) *Agent {
	t.Helper()
	return startProcess(t, Binary(t), append([]string{"agent", "--server", s.URL, "--log-format", "json"}, args...)...)
}

func (a *Agent) readLogs(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		a.mu.Lock()
		a.logs.Write(sc.Bytes())
		a.logs.WriteByte('\n')
		if a.file != nil {
			_, _ = a.file.Write(append(append(make([]byte, 0, len(sc.Bytes())+1), sc.Bytes()...), '\n'))
		}
		a.mu.Unlock()
	}
}

// Kill stops the agent with SIGKILL, as a crash would, and waits for it to exit.
func (a *Agent) Kill() {
	a.killed = true
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.done
}

// Logs returns what the agent has logged so far.
func (a *Agent) Logs() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.logs.String()
}

// Stop sends SIGTERM and waits for the agent to exit; it fails the test if the agent
// does not stop cleanly (exit code 0) within 10s. Stopping twice is harmless.
func (a *Agent) Stop(t testing.TB) {
	t.Helper()
	if a.killed {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
		if code := a.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("agent exited with code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("agent did not stop within 10s of SIGTERM")
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

const simPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  nodeName: %s
  containers:
  - name: nginx
    image: nginx:1.7.9
`

func TestAgentSimulatesNodes(t *testing.T) {
	s := StartServer(t, "")
	agent := startAgent(t, s, "--simulate", "3", "--name_prefix", "e2e", "--node-status-update-frequency", "1s")

	// kubectl get nodes: 3 Ready nodes, each labelled with its hostname.
	Eventually(t, 30*time.Second, "3 ready nodes", func() error {
		r := s.Kubectl("", "get", "nodes", "--no-headers", "-L", "kubernetes.io/hostname")
		if r.Err != nil {
			return fmt.Errorf("%v: %s", r.Err, r.Stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if len(lines) != 3 {
			return fmt.Errorf("want 3 nodes:\n%s", r.Stdout)
		}
		for i, l := range lines {
			f := strings.Fields(l)
			name := fmt.Sprintf("e2e-%d", i)
			if len(f) < 6 || f[0] != name || f[1] != "Ready" || f[5] != name {
				return fmt.Errorf("want %s Ready with hostname label, got %q", name, l)
			}
		}
		return nil
	})

	// Heartbeats keep coming.
	heartbeat := func() string {
		return s.MustKubectl(t, "", "get", "node", "e2e-1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}`)
	}
	first := heartbeat()
	Eventually(t, 10*time.Second, "a newer heartbeat", func() error {
		if h := heartbeat(); h == first {
			return fmt.Errorf("lastHeartbeatTime still %s", h)
		}
		return nil
	})

	cidr, err := netip.ParsePrefix(s.MustKubectl(t, "", "get", "node", "e2e-1", "-o", "jsonpath={.spec.podCIDR}"))
	if err != nil {
		t.Fatalf("pod CIDR of e2e-1: %v", err)
	}
	nodeIP := s.MustKubectl(t, "", "get", "node", "e2e-1", "-o", `jsonpath={.status.addresses[?(@.type=="InternalIP")].address}`)

	// A pod bound to e2e-1 runs with an IP from e2e-1's CIDR.
	s.MustKubectl(t, fmt.Sprintf(simPod, "web", "e2e-1"), "create", "-f", "-")
	webIP := waitRunning(t, s, "web", cidr, nodeIP)

	// A restarted agent takes its nodes back and keeps the running pod's IP.
	agent.Stop(t)
	startAgent(t, s, "--simulate", "3", "--name-prefix", "e2e", "--node-status-update-frequency", "1s")
	s.MustKubectl(t, fmt.Sprintf(simPod, "web2", "e2e-1"), "create", "-f", "-")
	if ip2 := waitRunning(t, s, "web2", cidr, nodeIP); ip2 == webIP {
		t.Errorf("web2 got web's IP %s", ip2)
	}
	if ip := s.MustKubectl(t, "", "get", "pod", "web", "-o", "jsonpath={.status.podIP}"); ip != webIP {
		t.Errorf("web's IP changed from %s to %s", webIP, ip)
	}

	// Deleting: the agent confirms it, and the pod goes.
	s.MustKubectl(t, "", "delete", "pod", "web", "web2", "--wait=false")
	Eventually(t, 30*time.Second, "pods gone", func() error {
		r := s.Kubectl("", "get", "pods", "-o", "name")
		if r.Err != nil || strings.TrimSpace(r.Stdout) != "" {
			return fmt.Errorf("pods left: %q %v %s", r.Stdout, r.Err, r.Stderr)
		}
		return nil
	})
}

// waitRunning polls until pod name is Running on the node at nodeIP with an IP in
// cidr, and returns that IP.
func waitRunning(t *testing.T, s *Server, name string, cidr netip.Prefix, nodeIP string) string {
	t.Helper()
	var podIP string
	Eventually(t, 30*time.Second, name+" running", func() error {
		r := s.Kubectl("", "get", "pod", name, "-o", "jsonpath={.status.phase} {.status.podIP} {.status.hostIP} {.status.containerStatuses[0].ready}")
		if r.Err != nil {
			return fmt.Errorf("%v: %s", r.Err, r.Stderr)
		}
		f := strings.Fields(r.Stdout)
		if len(f) != 4 || f[0] != "Running" {
			return fmt.Errorf("status %q", r.Stdout)
		}
		ip, err := netip.ParseAddr(f[1])
		if err != nil || !cidr.Contains(ip) {
			return fmt.Errorf("podIP %q not in %s", f[1], cidr)
		}
		if f[2] != nodeIP || f[3] != "true" {
			return fmt.Errorf("hostIP %s (want %s), ready %s", f[2], nodeIP, f[3])
		}
		podIP = f[1]
		return nil
	})
	return podIP
}

// TestAgentWithoutDockerFails: without a reachable engine the Docker agent stops at
// once, saying how to run simulated nodes instead.
func TestAgentWithoutDockerFails(t *testing.T) {
	cmd := exec.Command(Binary(t), "agent", "--port", "0")
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix:///nonexistent/docker.sock")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("agent without Docker: %v, want exit 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "cannot reach the Docker engine") || !strings.Contains(string(out), "--simulate") {
		t.Errorf("output %q lacks the explanation", out)
	}
}

// TestUpRunsTheWholeSystem starts the quick start's command with one simulated node:
// a pod created with kubectl is scheduled and runs.
func TestUpRunsTheWholeSystem(t *testing.T) {
	s := StartUp(t, "", "--simulate", "1")
	s.MustKubectl(t, "", "run", "web", "--image=nginx:1.7.9", "--restart=Never")
	Eventually(t, 30*time.Second, "pod web Running on sim-0", func() error {
		out := s.MustKubectl(t, "", "get", "pod", "web", "-o", "jsonpath={.status.phase} {.spec.nodeName}")
		if out != "Running sim-0" {
			return fmt.Errorf("pod web: %q", out)
		}
		return nil
	})
}
