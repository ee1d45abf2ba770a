package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// startServer runs a real kubeactor server in the test process on a free port and
// returns its URL; it stops when the test ends.
func startServer(t *testing.T) string {
	t.Helper()
	var cmd serverCmd
	parser, err := kong.New(&cmd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"--data-dir", t.TempDir(), "--insecure-port", "0", "--secure-port", "0", "--bind-address", "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cmd.Server, log, func(a string, _ *securePort) { addr <- a }) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("server did not start within 60s")
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually polls check until it returns nil or the deadline passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, check)
}

func TestModifiedConfigurationMatchesKubectl(t *testing.T) {
	tests := []struct {
		name   string
		obj    string
		want   string // the last-applied annotation set on create
		annots map[string]string
	}{
		{"no annotations: an empty map is recorded",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"annotations":{},"name":"x","namespace":"default"},"spec":{"containers":[{"image":"nginx","name":"c"}]}}` + "\n",
			map[string]string{}},
		{"an old last-applied is not recorded in the new one",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","annotations":{"a":"b","kubectl.kubernetes.io/last-applied-configuration":"old"}}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"annotations":{"a":"b"},"name":"x"}}` + "\n",
			map[string]string{"a": "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON([]byte(tt.obj)); err != nil {
				t.Fatal(err)
			}
			if err := setLastApplied(obj); err != nil {
				t.Fatal(err)
			}
			got := obj.GetAnnotations()
			if got[lastAppliedAnnotation] != tt.want {
				t.Fatalf("annotation\n%q, want\n%q", got[lastAppliedAnnotation], tt.want)
			}
			delete(got, lastAppliedAnnotation)
			if !reflect.DeepEqual(got, tt.annots) {
				t.Fatalf("other annotations %v, want %v", got, tt.annots)
			}
		})
	}
}

func TestApplyPatch(t *testing.T) {
	const file = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	applied := func(s string, extra func(*unstructured.Unstructured)) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if err := setLastApplied(o); err != nil {
			t.Fatal(err)
		}
		if extra != nil {
			extra(o)
		}
		return o
	}
	tests := []struct {
		name    string
		file    string
		current *unstructured.Unstructured
		pt      types.PatchType
		want    string
	}{
		{"same file: no patch", file, applied(file, nil), types.StrategicMergePatchType, `{}`},
		{"a label set by someone else stays", file, applied(file, func(o *unstructured.Unstructured) {
			o.SetLabels(map[string]string{"app": "web", "extra": "yes"})
		}), types.StrategicMergePatchType, `{}`},
		{"a label removed from the file is removed",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`,
			applied(file, nil), types.StrategicMergePatchType,
			`{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"annotations\":{},\"name\":\"x\"},\"spec\":{\"containers\":[{\"image\":\"nginx\",\"name\":\"c\"}]}}\n"},"labels":null}}`},
		{"containers merge by name",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}`,
			applied(file, nil), types.StrategicMergePatchType,
			`{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"annotations\":{},\"labels\":{\"app\":\"web\"},\"name\":\"x\"},\"spec\":{\"containers\":[{\"image\":\"nginx:2\",\"name\":\"c\"}]}}\n"}},"spec":{"$setElementOrder/containers":[{"name":"c"}],"containers":[{"image":"nginx:2","name":"c"}]}}`},
		{"an unknown kind gets a JSON merge patch",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"size":2}`,
			applied(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"size":1}`, nil), types.MergePatchType,
			`{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"annotations\":{},\"name\":\"w\"},\"size\":2}\n"}},"size":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON([]byte(tt.file)); err != nil {
				t.Fatal(err)
			}
			pt, patch, err := applyPatch(obj, tt.current, true)
			if err != nil {
				t.Fatal(err)
			}
			if pt != tt.pt || string(patch) != tt.want {
				t.Fatalf("patch %s\n%s\nwant %s\n%s", pt, patch, tt.pt, tt.want)
			}
		})
	}
}

func TestExpandFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b.yaml", "a.json", "notes.txt", "sub/c.yml"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		in        []string
		recursive bool
		want      []string
	}{
		{"stdin", []string{"-"}, false, []string{"-"}},
		{"a file", []string{filepath.Join(dir, "notes.txt")}, false, []string{filepath.Join(dir, "notes.txt")}},
		{"a directory: its manifests", []string{dir}, false, []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.yaml")}},
		{"recursive", []string{dir}, true, []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "sub/c.yml")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expandFiles(tt.in, tt.recursive)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("expandFiles = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := expandFiles([]string{filepath.Join(dir, "nope")}, false); err == nil {
		t.Fatal("a missing path is an error")
	}
}

const applyRCv1 = `apiVersion: v1
kind: ReplicationController
metadata:
  name: web
  labels: {app: web}
  annotations: {note: first}
spec:
  replicas: 1
  selector: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
`

// TestApplyAgainstServer applies files to a real in-process server, step by step.
func TestApplyAgainstServer(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	url := startServer(t)
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	v1 := filepath.Join(dir, "v1.yaml")
	v2 := filepath.Join(dir, "v2.yaml")
	pods := filepath.Join(dir, "pods")
	for path, content := range map[string]string{
		kc:                            "",
		v1:                            applyRCv1,
		v2:                            strings.Replace(strings.Replace(applyRCv1, "  annotations: {note: first}\n", "", 1), "replicas: 1", "replicas: 2", 1),
		filepath.Join(pods, "a.yaml"): "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: nginx}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers: [{name: c, image: nginx}]\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name     string
		args     []string
		want     string
		wantCode int
	}{
		{"create", []string{"apply", "-f", v1}, "replicationcontroller/web created\n", 0},
		{"apply again", []string{"apply", "-f", v1}, "replicationcontroller/web unchanged\n", 0},
		{"someone labels it", []string{"label", "rc", "web", "extra=yes"}, "replicationcontroller/web labeled\n", 0},
		{"still unchanged", []string{"apply", "-f", v1}, "replicationcontroller/web unchanged\n", 0},
		{"client dry run", []string{"apply", "-f", v2, "--dry_run=client"}, "replicationcontroller/web configured (dry run)\n", 0},
		{"server dry run", []string{"apply", "-f", v2, "--dry-run=server"}, "replicationcontroller/web configured (server dry run)\n", 0},
		{"dry runs changed nothing", []string{"get", "rc", "web", "-o", "jsonpath={.spec.replicas}"}, "1", 0},
		{"modified file", []string{"apply", "-f", v2}, "replicationcontroller/web configured\n", 0},
		{"the change is there, the removed annotation gone, the label kept", []string{"get", "rc", "web", "-o", "jsonpath={.spec.replicas} {.metadata.annotations.note} {.metadata.labels.extra}"}, "2  yes", 0},
		{"a directory", []string{"apply", "-f", pods}, "pod/a created\npod/b created\n", 0},
		{"-o name prints the objects", []string{"apply", "-f", filepath.Join(pods, "a.yaml"), "-o", "name"}, "pod/a\npod/b\n", 0},
		{"a missing file", []string{"apply", "-f", filepath.Join(dir, "nope.yaml")}, "", 1},
	}
	for _, st := range steps {
		out, errOut, code := runCLI(t, kc, append(st.args, "--server", url)...)
		if out != st.want || code != st.wantCode {
			t.Fatalf("step %q: stdout %q (exit %d, stderr %q), want %q (exit %d)", st.name, out, code, errOut, st.want, st.wantCode)
		}
	}
}
