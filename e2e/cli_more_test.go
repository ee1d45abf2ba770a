package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const applyRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: web
  labels: {app: web}
  annotations: {note: first}
spec:
  replicas: 0
  selector: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
`

// startKubeactor starts a long-running kubeactor client command (proxy, get -w)
// against s; it is killed when the test ends.
func (s *Server) startKubeactor(t *testing.T, args ...string) (*Background, io.Reader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, Binary(t), append(args, "--kubeconfig", s.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(s.Kubeconfig))
	b := &Background{}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = b
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start kubeactor: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	return b, stdout
}

func TestApplyInteroperatesWithKubectl(t *testing.T) {
	s := StartServer(t, "")
	dir := t.TempDir()
	v1 := writeFile(t, dir, "v1.yaml", applyRC)
	v2 := writeFile(t, dir, "v2.yaml", strings.Replace(strings.Replace(applyRC, "  annotations: {note: first}\n", "", 1), "image: nginx", "image: nginx:2", 1))
	v3 := writeFile(t, dir, "v3.yaml", strings.Replace(applyRC, "image: nginx", "image: nginx:3", 1))
	field := func(path string) string {
		return s.MustKubectl(t, "", "get", "rc", "web", "-o", "jsonpath="+path)
	}
	steps := []struct {
		name, tool, file, want string
	}{
		{"kubeactor creates", "kubeactor", v1, "replicationcontroller/web created\n"},
		{"kubeactor again: unchanged", "kubeactor", v1, "replicationcontroller/web unchanged\n"},
		{"kubectl sees kubeactor's annotation as its own", "kubectl", v1, "replicationcontroller/web unchanged\n"},
		{"kubectl applies a change", "kubectl", v2, "replicationcontroller/web configured\n"},
		{"kubeactor sees kubectl's annotation as its own", "kubeactor", v2, "replicationcontroller/web unchanged\n"},
		{"kubeactor applies a change", "kubeactor", v3, "replicationcontroller/web configured\n"},
		{"kubectl agrees it is applied", "kubectl", v3, "replicationcontroller/web unchanged\n"},
	}
	for i, st := range steps {
		var r Result
		if st.tool == "kubectl" {
			r = s.Kubectl("", "apply", "-f", st.file)
		} else {
			r = s.Kubeactor(t, "", "apply", "-f", st.file)
		}
		if r.Err != nil || r.Stdout != st.want {
			t.Fatalf("step %q: %v\nstdout %q, want %q\nstderr %q", st.name, r.Err, r.Stdout, st.want, r.Stderr)
		}
		if i == 1 {
			s.MustKubectl(t, "", "label", "rc", "web", "extra=yes")
		}
	}
	if got := field("{.spec.template.spec.containers[0].image} {.metadata.annotations.note} {.metadata.labels.extra}"); got != "nginx:3 first yes" {
		t.Fatalf("after the applies: %q", got)
	}
	// v2 dropped the annotation: applying it removes the field again.
	s.kubeactorOK(t, "replicationcontroller/web configured\n", "apply", "-f", v2)
	if got := field("{.metadata.annotations.note}|{.metadata.labels.extra}"); got != "|yes" {
		t.Fatalf("a field removed from the file stays: %q", got)
	}
	r := s.Kubeactor(t, "", "apply", "-f", filepath.Join(dir, "missing.yaml"))
	if r.Err == nil || !strings.HasPrefix(r.Stderr, "error: ") {
		t.Fatalf("missing file: %v %q", r.Err, r.Stderr)
	}
}

func TestProxyServesTheAPI(t *testing.T) {
	s := StartServer(t, "")
	bg, stdout := s.startKubeactor(t, "proxy", "--port", "0")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "Starting to serve on 127.0.0.1:") {
		t.Fatalf("proxy printed %q, %v; stderr %s", line, err, bg.Output())
	}
	base := "http://" + strings.TrimSpace(strings.TrimPrefix(line, "Starting to serve on "))

	resp, err := http.Get(base + "/api/v1/namespaces/default/pods")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"kind":"PodList"`) {
		t.Fatalf("GET pods through the proxy: %s %s", resp.Status, body)
	}

	watch, err := http.Get(base + "/api/v1/namespaces/default/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Body.Close()
	if out := s.MustKubectl(t, "", "-s", base, "run", "via-proxy", "--image=nginx", "--restart=Never"); !strings.Contains(out, "via-proxy") {
		t.Fatalf("kubectl run through the proxy: %q", out)
	}
	event, err := bufio.NewReader(watch.Body).ReadString('\n')
	if err != nil || !strings.Contains(event, `"ADDED"`) || !strings.Contains(event, `"via-proxy"`) {
		t.Fatalf("watch through the proxy: %q, %v", event, err)
	}
	if out := s.MustKubectl(t, "", "-s", base, "get", "pods", "-o", "name"); out != "pod/via-proxy\n" {
		t.Fatalf("kubectl get pods through the proxy: %q", out)
	}
}

func TestCompletionAgainstServer(t *testing.T) {
	s := StartServer(t, "")
	s.MustKubectl(t, "", "run", "web-a", "--image=nginx", "--restart=Never")
	s.MustKubectl(t, "", "run", "db", "--image=nginx", "--restart=Never")
	tests := []struct {
		name  string
		words []string
		want  string
	}{
		{"pod names for get pods", []string{"get", "pods", ""}, "db\nweb-a\n"},
		{"pod names with a prefix", []string{"describe", "po", "w"}, "web-a\n"},
		{"resource types", []string{"get", "se"}, "secrets\nserviceaccounts\nservices\n"},
		{"commands", []string{"comp"}, "completion\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.runClient(Binary(t), "", append([]string{"__complete", "--kubeconfig", s.Kubeconfig, "--"}, tt.words...))
			if r.Err != nil || r.Stdout != tt.want {
				t.Fatalf("__complete %q: %v\n%q, want %q\nstderr %q", tt.words, r.Err, r.Stdout, tt.want, r.Stderr)
			}
		})
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if r := s.runClient(Binary(t), "", []string{"completion", shell}); r.Err != nil || !strings.Contains(r.Stdout, "__complete") {
			t.Fatalf("completion %s: %v %q", shell, r.Err, r.Stderr)
		}
	}
}

func TestGetWatchWithOutputFormats(t *testing.T) {
	s := StartServer(t, "")
	s.MustKubectl(t, "", "run", "first", "--image=nginx", "--restart=Never")
	tests := []struct {
		name string
		args []string
		pod  string
		want []string
	}{
		{"name", []string{"-o", "name"}, "second", []string{"pod/first\n", "pod/second\n"}},
		{"yaml", []string{"-o", "yaml"}, "third", []string{"name: first\n", "---\n", "name: third\n"}},
		{"watch-only custom columns", []string{"--watch_only", "-o", "custom-columns=NAME:.metadata.name"}, "fourth", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"get", "pods"}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "watch_only") {
				args = append(args, "-w")
			}
			bg, stdout := s.startKubeactor(t, args...)
			out := &Background{}
			go func() { _, _ = io.Copy(out, stdout) }()
			if strings.Contains(strings.Join(tt.args, " "), "watch_only") {
				// Nothing shows when the watch begins: a pod created before it would
				// never be printed. Create pods until one is; the first printed comes
				// under the header.
				n := 0
				Eventually(t, 30*time.Second, "a new pod is printed", func() error {
					n++
					name := fmt.Sprintf("%s-%d", tt.pod, n)
					s.MustKubectl(t, "", "run", name, "--image=nginx", "--restart=Never")
					got := out.Output()
					if !strings.HasPrefix(got, "NAME\n"+tt.pod+"-") || strings.Contains(got, "first") {
						return fmt.Errorf("printed %q (stderr %q)", got, bg.Output())
					}
					return nil
				})
				return
			}
			Eventually(t, 15*time.Second, "the watch is established", func() error {
				if !strings.Contains(out.Output(), "first") {
					return fmt.Errorf("listed %q (stderr %q)", out.Output(), bg.Output())
				}
				return nil
			})
			s.MustKubectl(t, "", "run", tt.pod, "--image=nginx", "--restart=Never")
			Eventually(t, 15*time.Second, "the new pod is printed", func() error {
				for _, w := range tt.want {
					if !strings.Contains(out.Output(), w) {
						return fmt.Errorf("no %q in %q (stderr %q)", w, out.Output(), bg.Output())
					}
				}
				return nil
			})
		})
	}
}
