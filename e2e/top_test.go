package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// topRow finds name's row in `kubectl top` output and checks that its CPU and
// memory columns hold figures (cpu in millicores, memory in Mi): the fields after the
// name, from column cpuCol.
func topRow(out, name string, cpuCol, memCol int) error {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) <= memCol || (f[0] != name && f[1] != name) {
			continue
		}
		cpu, mem := f[cpuCol], f[memCol]
		if !strings.HasSuffix(cpu, "m") || !strings.HasSuffix(mem, "Mi") || strings.Contains(line, "<unknown>") {
			return fmt.Errorf("row %q: cpu %q memory %q", line, cpu, mem)
		}
		return nil
	}
	return fmt.Errorf("no row for %s in:\n%s", name, out)
}

// top runs `kubectl top args...` and checks the rows of names.
func top(s *Server, cpuCol, memCol int, names []string, args ...string) error {
	r := s.Kubectl("", append([]string{"top"}, args...)...)
	if r.Err != nil {
		return fmt.Errorf("kubectl top %s: %v: %s%s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	for _, n := range names {
		if err := topRow(r.Stdout, n, cpuCol, memCol); err != nil {
			return err
		}
	}
	return nil
}

const busyPod = `apiVersion: v1
kind: Pod
metadata:
  name: top-busy
spec:
  containers:
  - name: main
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "while true; do i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; sleep 1; done"]
`

// TestTopDockerNode: the installed kubectl's `top nodes` and `top pods` show the
// Docker node and its busybox pod with figures, from the agent's /stats/summary
// (two collections 10s apart make the first CPU rate) through metrics.k8s.io.
func TestTopDockerNode(t *testing.T) {
	n := startDockerNode(t, "--node-ip", "127.0.0.1", "--read-only-port", "0", "--healthz-port", "0", "--proxy-mode", "none")
	n.create(busyPod)
	n.waitPod("top-busy", 60*time.Second, "Running", running)
	Eventually(t, 90*time.Second, "kubectl top nodes shows "+n.name, func() error {
		return top(n.s, 1, 3, []string{n.name}, "nodes")
	})
	Eventually(t, 90*time.Second, "kubectl top pods shows top-busy", func() error {
		return top(n.s, 1, 2, []string{"top-busy"}, "pods")
	})
	// -A adds the NAMESPACE column before the name.
	Eventually(t, 30*time.Second, "kubectl top pods -A shows top-busy", func() error {
		return top(n.s, 2, 3, []string{"top-busy"}, "pods", "-A")
	})
	out := n.s.MustKubectl(t, "", "top", "pods", "top-busy", "--containers")
	if !strings.Contains(out, "main") {
		t.Errorf("top pods --containers lacks the container main:\n%s", out)
	}
	t.Logf("kubectl top nodes:\n%s\nkubectl top pods --containers:\n%s", n.s.MustKubectl(t, "", "top", "nodes"), out)
}

const requestingPod = `apiVersion: v1
kind: Pod
metadata:
  name: top-sim
spec:
  containers:
  - name: main
    image: nginx
    resources:
      requests:
        cpu: 400m
        memory: 200Mi
`

// TestTopSimulatedNodes: simulated nodes serve made-up usage from their pods'
// requests, so `kubectl top` works without Docker.
func TestTopSimulatedNodes(t *testing.T) {
	s := StartServer(t, "")
	startAgent(t, s, "--simulate", "2", "--name-prefix", "topsim", "--port", "0", "--read-only-port", "0",
		"--node-status-update-frequency", "1s")
	Eventually(t, 60*time.Second, "kubectl top nodes shows both nodes", func() error {
		return top(s, 1, 3, []string{"topsim-0", "topsim-1"}, "nodes")
	})
	s.MustKubectl(t, requestingPod, "create", "-f", "-")
	Eventually(t, 60*time.Second, "kubectl top pods shows top-sim", func() error {
		return top(s, 1, 2, []string{"top-sim"}, "pods")
	})
	t.Logf("kubectl top nodes:\n%s\nkubectl top pods:\n%s", s.MustKubectl(t, "", "top", "nodes"), s.MustKubectl(t, "", "top", "pods"))
}
