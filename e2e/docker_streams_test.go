package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const twoContainerPod = `apiVersion: v1
kind: Pod
metadata:
  name: duo
spec:
  containers:
  - name: server
    image: kubeactor/testserver:latest
    ports:
    - containerPort: 8080
  - name: shell
    image: kubeactor/busybox:latest
    workingDir: /tmp
    command: ["sh", "-c", "i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done"]
`

// TestDockerLogsExecPortForward drives the streaming subresources through the API
// server to the agent, with the real kubectl and with kubeactor's own commands:
// logs (-c, -f, --tail, --timestamps, --previous), exec (with stdin, exit codes),
// port-forward, and the node and pod proxies.
func TestDockerLogsExecPortForward(t *testing.T) {
	n := startDockerNode(t, privatePorts...)
	n.create(twoContainerPod)
	n.waitPod("duo", 60*time.Second, "Running", running)
	clients := map[string]func(stdin string, args ...string) Result{
		"kubectl":   n.s.Kubectl,
		"kubeactor": func(stdin string, args ...string) Result { return n.s.Kubeactor(t, stdin, args...) },
	}

	for name, run := range clients {
		t.Run(name, func(t *testing.T) {
			// logs of a pod with two containers: the book's kubectl (and the
			// server) want a container named; kubectl 1.32 defaults to the first.
			r := run("", "logs", "duo")
			if name == "kubectl" && !strings.Contains(r.Stderr, `Defaulted container "server"`) ||
				name == "kubeactor" && (r.Err == nil || !strings.Contains(r.Stderr, "a container name must be specified")) {
				t.Errorf("logs without -c: %v %q", r.Err, r.Stderr)
			}
			Eventually(t, 20*time.Second, "logs -c shell --tail 1", func() error {
				r := run("", "logs", "duo", "-c", "shell", "--tail", "1")
				if r.Err != nil || strings.Count(r.Stdout, "tick") != 1 {
					return fmt.Errorf("%v %q %q", r.Err, r.Stdout, r.Stderr)
				}
				return nil
			})
			r = run("", "logs", "duo", "-c", "server", "--timestamps")
			if r.Err != nil || !strings.Contains(r.Stdout, "testserver listening on :8080") || !strings.Contains(r.Stdout, "Z ") {
				t.Errorf("logs --timestamps: %v %q %q", r.Err, r.Stdout, r.Stderr)
			}

			// exec: output, stdin and the exit code.
			r = run("", "exec", "duo", "-c", "shell", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
			if ee, ok := r.Err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || r.Stdout != "out\n" || !strings.Contains(r.Stderr, "err") {
				t.Errorf("exec: %v stdout %q stderr %q, want exit 3", r.Err, r.Stdout, r.Stderr)
			}
			r = run("", "exec", "duo", "-c", "shell", "--", "pwd")
			if r.Err != nil || r.Stdout != "/tmp\n" {
				t.Errorf("exec pwd (workingDir /tmp): %v %q %q", r.Err, r.Stdout, r.Stderr)
			}
			r = run("hello from stdin\n", "exec", "-i", "duo", "-c", "shell", "--", "cat")
			if r.Err != nil || r.Stdout != "hello from stdin\n" {
				t.Errorf("exec -i: %v %q %q", r.Err, r.Stdout, r.Stderr)
			}
		})
	}

	// exec -t: the command gets a terminal (kubectl refuses one when its stdin is
	// not a terminal; kubeactor passes the flag through).
	r := n.s.Kubeactor(t, "", "exec", "-t", "duo", "-c", "shell", "--", "tty")
	if r.Err != nil || !strings.Contains(r.Stdout, "/dev/pts/") {
		t.Errorf("exec -t: %v %q %q", r.Err, r.Stdout, r.Stderr)
	}
	// The book's form: flags between the pod and the command, no "--" (kubectl 1.0).
	r = n.s.Kubeactor(t, "", "exec", "duo", "-c", "shell", "-s", n.s.URL, "sh", "-c", "echo book-form")
	if r.Err != nil || r.Stdout != "book-form\n" {
		t.Errorf("exec POD -c CONTAINER CMD: %v %q %q", r.Err, r.Stdout, r.Stderr)
	}
	// exec -it with input that is not a terminal runs without one, as kubectl does.
	for name, run := range clients {
		r := run("echo from-stdin\n", "exec", "-it", "duo", "-c", "shell", "--", "sh")
		if r.Err != nil || r.Stdout != "from-stdin\n" || !strings.Contains(r.Stderr, "Unable to use a TTY") {
			t.Errorf("%s exec -it: %v %q %q", name, r.Err, r.Stdout, r.Stderr)
		}
	}

	// logs -f follows live output.
	for name, args := range map[string][]string{"kubectl": nil, "kubeactor": {"kubeactor"}} {
		t.Run(name+" follow", func(t *testing.T) {
			var b *Background
			if args == nil {
				b = n.s.StartKubectl(t, "logs", "-f", "duo", "-c", "shell", "--tail", "1")
			} else {
				b = n.s.StartKubeactor(t, "logs", "-f", "duo", "-c", "shell", "--tail", "1")
			}
			Eventually(t, 20*time.Second, "followed lines", func() error {
				if c := strings.Count(b.Output(), "tick"); c < 3 {
					return fmt.Errorf("%d lines so far: %q", c, b.Output())
				}
				return nil
			})
		})
	}

	// port-forward: a local port reaches the pod's port 8080.
	for name, start := range map[string]func(testing.TB, ...string) *Background{"kubectl": n.s.StartKubectl, "kubeactor": n.s.StartKubeactor} {
		t.Run(name+" port-forward", func(t *testing.T) {
			port := freePort(t)
			b := start(t, "port-forward", "pod/duo", fmt.Sprintf("%d:8080", port))
			Eventually(t, 20*time.Second, "forwarded port answers", func() error {
				body, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/echo?msg=through-the-tunnel", port))
				if err != nil || strings.TrimSpace(body) != "through-the-tunnel" {
					return fmt.Errorf("%q %v (port-forward output %q)", body, err, b.Output())
				}
				return nil
			})
			if !strings.Contains(b.Output(), fmt.Sprintf("Forwarding from 127.0.0.1:%d -> 8080", port)) {
				t.Errorf("port-forward printed %q", b.Output())
			}
		})
	}

	// The agent's API through the API server's node proxy, both path styles.
	for _, path := range []string{"/api/v1/nodes/" + n.name + "/proxy/pods", "/api/v1/proxy/nodes/" + n.name + "/pods"} {
		body, err := httpGet(n.s.URL + path)
		if err != nil || !strings.Contains(body, `"name":"duo"`) {
			t.Errorf("GET %s: %v %.200q", path, err, body)
		}
	}
	for _, path := range []string{"/api/v1/nodes/" + n.name + "/proxy/spec", "/api/v1/proxy/nodes/" + n.name + "/stats"} {
		body, err := httpGet(n.s.URL + path)
		var v any
		if err != nil || json.Unmarshal([]byte(body), &v) != nil {
			t.Errorf("GET %s: %v %.200q", path, err, body)
		}
	}
	// The pod proxy, both path styles, to the server container's port.
	for _, path := range []string{"/api/v1/namespaces/default/pods/duo:8080/proxy/echo?msg=pod-proxy", "/api/v1/proxy/namespaces/default/pods/duo:8080/echo?msg=pod-proxy"} {
		body, err := httpGet(n.s.URL + path)
		if err != nil || strings.TrimSpace(body) != "pod-proxy" {
			t.Errorf("GET %s: %v %q", path, err, body)
		}
	}
}

// TestDockerLogsPrevious: --previous shows the output of the instance before a restart.
func TestDockerLogsPrevious(t *testing.T) {
	n := startDockerNode(t, privatePorts...)
	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: phoenix
spec:
  containers:
  - name: main
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "echo life at $(date +%s%N); sleep 2; exit 1"]
`)
	n.waitPod("phoenix", 90*time.Second, "restarted", restartedAtLeast(1))
	r := n.s.Kubectl("", "logs", "phoenix", "--previous")
	if r.Err != nil || !strings.Contains(r.Stdout, "life at") {
		t.Fatalf("logs --previous: %v %q %q", r.Err, r.Stdout, r.Stderr)
	}
}

// freePort is a TCP port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
