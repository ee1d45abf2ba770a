package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func guestbook(name string) string { return filepath.Join("testdata", "guestbook", name) }

const nginxPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
    tier: frontend
spec:
  containers:
  - name: nginx
    image: nginx:1.7.9
    ports:
    - containerPort: 80
`

func TestKubectlDiscovery(t *testing.T) {
	s := StartServer(t, "")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"api-resources", []string{"api-resources"}, []string{"pods", "po", "Pod", "replicationcontrollers", "rc", "services", "svc", "namespaces", "ns", "endpoints", "nodes", "events", "secrets", "serviceaccounts", "resourcequotas", "limitranges", "podtemplates", "componentstatuses"}},
		{"api-versions", []string{"api-versions"}, []string{"v1"}},
		{"version", []string{"version", "-o", "json"}, []string{`"gitVersion": "v1.0.0"`}},
		{"namespaces exist from the start", []string{"get", "namespaces"}, []string{"default", "kube-system", "Active"}},
		{"componentstatuses", []string{"get", "componentstatuses"}, []string{"NAME", "STATUS"}},
		{"explain", []string{"explain", "pods.spec.containers"}, []string{"image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := s.MustKubectl(t, "", tt.args...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("kubectl %s: output lacks %q:\n%s", strings.Join(tt.args, " "), w, out)
				}
			}
		})
	}
}

func TestKubectlCreateGetFormats(t *testing.T) {
	s := StartServer(t, "")
	if out := s.MustKubectl(t, nginxPod, "create", "-f", "-"); !strings.Contains(out, "pod/web created") {
		t.Fatalf("create: %q", out)
	}
	s.MustKubectl(t, "", "create", "-f", guestbook("redis-master-controller.yaml"))
	s.MustKubectl(t, "", "create", "-f", guestbook("redis-master-service.yaml"))
	s.MustKubectl(t, "", "create", "namespace", "team-a")
	s.MustKubectl(t, strings.Replace(nginxPod, "name: web", "name: other", 1), "create", "-n", "team-a", "-f", "-")

	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"table", []string{"get", "pods"}, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "web", "0/1", "Pending"}, []string{"other"}},
		{"wide", []string{"get", "pods", "-o", "wide"}, []string{"IP", "NODE", "web"}, nil},
		{"name", []string{"get", "pods", "-o", "name"}, []string{"pod/web"}, nil},
		{"json", []string{"get", "pod", "web", "-o", "json"}, []string{`"kind": "Pod"`, `"restartPolicy": "Always"`, `"imagePullPolicy": "IfNotPresent"`, `"uid"`}, nil},
		{"yaml", []string{"get", "pod", "web", "-o", "yaml"}, []string{"kind: Pod", "dnsPolicy: ClusterFirst", "terminationMessagePath: /dev/termination-log"}, nil},
		{"jsonpath", []string{"get", "pod", "web", "-o", "jsonpath={.spec.containers[0].image}"}, []string{"nginx:1.7.9"}, nil},
		{"custom-columns", []string{"get", "pods", "-o", "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image"}, []string{"NAME", "IMAGE", "web", "nginx:1.7.9"}, nil},
		{"label selector", []string{"get", "pods", "-l", "app=web,tier in (frontend,backend)", "-o", "name"}, []string{"pod/web"}, nil},
		{"label selector excludes", []string{"get", "pods", "-l", "app!=web", "-o", "name"}, nil, []string{"pod/web"}},
		{"field selector", []string{"get", "pods", "--field-selector", "metadata.name=web,status.phase=Pending", "-o", "name"}, []string{"pod/web"}, nil},
		{"field selector excludes", []string{"get", "pods", "--field-selector", "status.phase=Running", "-o", "name"}, nil, []string{"pod/web"}},
		{"all namespaces", []string{"get", "pods", "-A"}, []string{"NAMESPACE", "default", "web", "team-a", "other"}, nil},
		{"rc", []string{"get", "rc"}, []string{"DESIRED", "redis-master"}, nil},
		{"service", []string{"get", "svc", "redis-master"}, []string{"redis-master", "6379/TCP"}, nil},
		{"describe pod", []string{"describe", "pod", "web"}, []string{"Name:", "web", "nginx:1.7.9", "Labels:"}, nil},
		{"describe rc", []string{"describe", "rc", "redis-master"}, []string{"Name:", "redis-master", "Selector:"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := s.MustKubectl(t, "", tt.args...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("kubectl %s: output lacks %q:\n%s", strings.Join(tt.args, " "), w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("kubectl %s: output has %q:\n%s", strings.Join(tt.args, " "), w, out)
				}
			}
		})
	}
}

func TestKubectlErrors(t *testing.T) {
	s := StartServer(t, "")
	s.MustKubectl(t, nginxPod, "create", "-f", "-")
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"not found", "", []string{"get", "pod", "nope"}, `Error from server (NotFound): pods "nope" not found`},
		{"already exists", nginxPod, []string{"create", "-f", "-"}, `Error from server (AlreadyExists): error when creating "STDIN": pods "web" already exists`},
		{"invalid", strings.Replace(nginxPod, "image: nginx:1.7.9", "image: \"\"", 1), []string{"create", "--validate=false", "-f", "-"}, `The Pod "web" is invalid: spec.containers[0].image: Required value`},
		{"rc selector mismatch", strings.Replace(mustRead(t, guestbook("redis-master-controller.yaml")), "    name: redis-master\n  template", "    name: other\n  template", 1), []string{"create", "-f", "-"}, "selector` does not match template `labels`"},
		{"missing namespace", nginxPod, []string{"create", "-n", "nowhere", "-f", "-"}, `namespaces "nowhere" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Kubectl(tt.stdin, tt.args...)
			if r.Err == nil {
				t.Fatalf("kubectl %s succeeded, want an error:\n%s", strings.Join(tt.args, " "), r.Stdout)
			}
			if !strings.Contains(r.Stderr, tt.want) {
				t.Fatalf("kubectl %s: stderr %q lacks %q", strings.Join(tt.args, " "), r.Stderr, tt.want)
			}
		})
	}
}

func TestKubectlModify(t *testing.T) {
	s := StartServer(t, "")
	dir := t.TempDir()
	podFile := writeFile(t, dir, "pod.yaml", nginxPod)

	// apply twice: the first creates, the second changes nothing.
	if out := s.MustKubectl(t, "", "apply", "-f", podFile); !strings.Contains(out, "pod/web created") {
		t.Fatalf("first apply: %q", out)
	}
	if out := s.MustKubectl(t, "", "apply", "-f", podFile); !strings.Contains(out, "pod/web unchanged") {
		t.Fatalf("second apply: %q", out)
	}
	// apply a changed image: configured.
	writeFile(t, dir, "pod.yaml", strings.Replace(nginxPod, "nginx:1.7.9", "nginx:1.9.1", 1))
	if out := s.MustKubectl(t, "", "apply", "-f", podFile); !strings.Contains(out, "pod/web configured") {
		t.Fatalf("third apply: %q", out)
	}
	assertJSONPath(t, s, "pod", "web", "{.spec.containers[0].image}", "nginx:1.9.1")

	// label and annotate, with --overwrite and key- removal.
	s.MustKubectl(t, "", "label", "pod", "web", "env=prod")
	assertJSONPath(t, s, "pod", "web", "{.metadata.labels.env}", "prod")
	if r := s.Kubectl("", "label", "pod", "web", "env=dev"); r.Err == nil || !strings.Contains(r.Stderr, "already has a value") {
		t.Fatalf("label without --overwrite: err=%v stderr=%q", r.Err, r.Stderr)
	}
	s.MustKubectl(t, "", "label", "pod", "web", "env=dev", "--overwrite")
	assertJSONPath(t, s, "pod", "web", "{.metadata.labels.env}", "dev")
	s.MustKubectl(t, "", "label", "pod", "web", "env-")
	assertJSONPath(t, s, "pod", "web", "{.metadata.labels.env}", "")
	s.MustKubectl(t, "", "annotate", "pod", "web", "description=the book's web pod")
	assertJSONPath(t, s, "pod", "web", "{.metadata.annotations.description}", "the book's web pod")

	// the three patch types on a pod (whose containers may not be added to).
	if r := s.Kubectl("", "patch", "pod", "web", "-p", `{"spec":{"containers":[{"name":"log-tailer","image":"log-tailer:1.0"}]}}`); r.Err == nil || !strings.Contains(r.Stderr, "pod updates may not change fields") {
		t.Fatalf("adding a container to a pod: err=%v stderr=%q", r.Err, r.Stderr)
	}
	s.MustKubectl(t, "", "patch", "pod", "web", "--type=merge", "-p", `{"metadata":{"labels":{"patched":"merge"}}}`)
	assertJSONPath(t, s, "pod", "web", "{.metadata.labels.patched}", "merge")
	s.MustKubectl(t, "", "patch", "pod", "web", "--type=json", "-p", `[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.10"}]`)
	assertJSONPath(t, s, "pod", "web", "{.spec.containers[0].image}", "nginx:1.10")
	s.MustKubectl(t, "", "patch", "pod", "web", "--type=strategic", "-p", `{"metadata":{"labels":{"patched":"strategic"}}}`)
	assertJSONPath(t, s, "pod", "web", "{.metadata.labels.patched}", "strategic")

	// replace from a file.
	rc := mustRead(t, guestbook("redis-master-controller.yaml"))
	s.MustKubectl(t, rc, "create", "-f", "-")
	if out := s.MustKubectl(t, strings.Replace(rc, "replicas: 1", "replicas: 2", 1), "replace", "-f", "-"); !strings.Contains(out, "replicationcontroller/redis-master replaced") {
		t.Fatalf("replace: %q", out)
	}
	assertJSONPath(t, s, "rc", "redis-master", "{.spec.replicas}", "2")

	// the book's strategic merge example, on the RC's pod template: the container list
	// is merged by name, so a second container joins; a merge patch replaces the list.
	s.MustKubectl(t, "", "patch", "rc", "redis-master", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"log-tailer","image":"log-tailer:1.0"}]}}}}`)
	assertJSONPath(t, s, "rc", "redis-master", "{.spec.template.spec.containers[*].name}", "log-tailer master")
	s.MustKubectl(t, "", "patch", "rc", "redis-master", "--type=merge", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"master","image":"kubeguide/redis-master"}]}}}}`)
	assertJSONPath(t, s, "rc", "redis-master", "{.spec.template.spec.containers[*].name}", "master")

	// scale through the scale subresource.
	if out := s.MustKubectl(t, "", "scale", "rc", "redis-master", "--replicas=5"); !strings.Contains(out, "replicationcontroller/redis-master scaled") {
		t.Fatalf("scale: %q", out)
	}
	assertJSONPath(t, s, "rc", "redis-master", "{.spec.replicas}", "5")
	assertJSONPath(t, s, "rc", "redis-master", "{.metadata.generation}", "5")
}

func TestKubectlDelete(t *testing.T) {
	s := StartServer(t, "")
	dir := t.TempDir()
	podFile := writeFile(t, dir, "pod.yaml", nginxPod)
	s.MustKubectl(t, "", "create", "-f", podFile)
	for i := 0; i < 3; i++ {
		s.MustKubectl(t, strings.NewReplacer("name: web", fmt.Sprintf("name: batch-%d", i), "app: web", "app: batch").Replace(nginxPod), "create", "-f", "-")
	}
	s.MustKubectl(t, strings.Replace(nginxPod, "name: web", "name: single", 1), "create", "-f", "-")

	if out := s.MustKubectl(t, "", "delete", "-f", podFile); !strings.Contains(out, `pod "web" deleted`) {
		t.Fatalf("delete -f: %q", out)
	}
	if out := s.MustKubectl(t, "", "delete", "pods", "-l", "app=batch"); strings.Count(out, "deleted") != 3 {
		t.Fatalf("delete -l: %q", out)
	}
	if out := s.MustKubectl(t, "", "delete", "pod", "single"); !strings.Contains(out, `pod "single" deleted`) {
		t.Fatalf("delete by name: %q", out)
	}
	if out := s.MustKubectl(t, "", "get", "pods", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Fatalf("pods left after deletes: %q", out)
	}
	if r := s.Kubectl("", "delete", "pod", "single"); r.Err == nil || !strings.Contains(r.Stderr, `pods "single" not found`) {
		t.Fatalf("second delete: err=%v stderr=%q", r.Err, r.Stderr)
	}
}

// TestKubectlWatch runs `kubectl get pods -w` and sees existing and created pods.
func TestKubectlWatch(t *testing.T) {
	s := StartServer(t, "")
	s.MustKubectl(t, nginxPod, "create", "-f", "-")
	w := s.StartKubectl(t, "get", "pods", "-w")
	Eventually(t, 20*time.Second, "watch lists the existing pod", func() error {
		if !regexp.MustCompile(`(?m)^web\s+0/1\s+Pending`).MatchString(w.Output()) {
			return fmt.Errorf("output so far %q", w.Output())
		}
		return nil
	})
	s.MustKubectl(t, strings.Replace(nginxPod, "name: web", "name: web-2", 1), "create", "-f", "-")
	s.MustKubectl(t, "", "label", "pod", "web", "seen=yes")
	Eventually(t, 20*time.Second, "watch shows the new pod", func() error {
		if !regexp.MustCompile(`(?m)^web-2\s+0/1\s+Pending`).MatchString(w.Output()) {
			return fmt.Errorf("output so far %q", w.Output())
		}
		return nil
	})
}

func assertJSONPath(t *testing.T, s *Server, kind, name, path, want string) {
	t.Helper()
	got := s.MustKubectl(t, "", "get", kind, name, "-o", "jsonpath="+path)
	if got != want {
		t.Fatalf("%s/%s %s = %q, want %q", kind, name, path, got, want)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
