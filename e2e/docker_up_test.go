package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUpRunsDockerNode starts the quick start's command as the README gives it: the
// server and one Docker node agent in one process. A pod created with kubectl runs
// on the engine, and its output reaches kubectl logs; the book's guestbook answers
// on localhost:30001, as in the book's single-machine walkthrough.
func TestUpRunsDockerNode(t *testing.T) {
	requireDocker(t)
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	node := strings.ToLower(hostname)
	n := &dockerNode{t: t, name: node}
	t.Cleanup(n.removeContainers)
	s := StartUp(t, "")
	s.MustKubectl(t, "", "run", "hello", "--image="+imageTestServer, "--restart=Never", "--image-pull-policy=IfNotPresent")
	Eventually(t, 60*time.Second, "pod hello Running on "+node, func() error {
		out := s.MustKubectl(t, "", "get", "pod", "hello", "-o", "jsonpath={.status.phase} {.spec.nodeName}")
		if out != "Running "+node {
			return fmt.Errorf("pod hello: %q", out)
		}
		return nil
	})
	Eventually(t, 30*time.Second, "kubectl logs", func() error {
		r := s.Kubectl("", "logs", "hello")
		if r.Err != nil || !strings.Contains(r.Stdout, "testserver listening on :8080") {
			return fmt.Errorf("kubectl logs: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
		return nil
	})

	for _, f := range []string{"redis-master-controller.yaml", "redis-master-service.yaml",
		"redis-slave-controller.yaml", "redis-slave-service.yaml",
		"frontend-controller.yaml", "frontend-service.yaml"} {
		s.MustKubectl(t, "", "create", "-f", filepath.Join("testdata", "guestbook-local", f))
	}
	Eventually(t, 60*time.Second, "set through localhost:30001", func() error {
		body, err := httpGet("http://127.0.0.1:30001/?cmd=set&key=messages&value=Hello")
		if err != nil || !strings.Contains(body, `"Updated"`) {
			return fmt.Errorf("%q %v", body, err)
		}
		return nil
	})
	Eventually(t, 30*time.Second, "get through localhost:30001", func() error {
		body, err := httpGet("http://127.0.0.1:30001/?cmd=get&key=messages")
		if err != nil || !strings.Contains(body, `"Hello"`) {
			return fmt.Errorf("%q %v", body, err)
		}
		return nil
	})
}

// TestUpWithoutDockerFails: without a reachable engine, up stops before starting
// anything and says how to run without Docker.
func TestUpWithoutDockerFails(t *testing.T) {
	cmd := exec.Command(Binary(t), "up", "--data-dir", t.TempDir(), "--insecure-port", "0")
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix:///nonexistent/docker.sock")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("up without Docker: %v, want exit 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "cannot reach the Docker engine") || !strings.Contains(string(out), "--simulate") {
		t.Errorf("output %q lacks the explanation", out)
	}
}
