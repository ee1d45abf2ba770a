package openapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	fakeAPIVersions = `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`
	fakeAPIGroups   = `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`
	fakeResources   = `{"kind":"APIResourceList","groupVersion":"v1","resources":[
 {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","shortNames":["po"],
  "verbs":["create","delete","deletecollection","get","list","patch","update","watch"]},
 {"name":"services","singularName":"service","namespaced":true,"kind":"Service","shortNames":["svc"],
  "verbs":["create","delete","get","list","patch","update","watch"]}]}`

	validPod = `apiVersion: v1
kind: Pod
metadata:
  name: nginx
spec:
  containers:
  - name: nginx
    image: nginx:1.7.9
    ports:
    - containerPort: 80
`
	unknownFieldPod = `apiVersion: v1
kind: Pod
metadata:
  name: nginx
spec:
  containers:
  - name: nginx
    imagee: nginx:1.7.9
`
)

// kubectlServer serves the OpenAPI handler behind a minimal fake discovery and records
// the paths requested. With v3 false, /openapi/v3 answers 404 so that kubectl falls back
// to /openapi/v2.
type kubectlServer struct {
	mu    sync.Mutex
	paths []string
}

func (k *kubectlServer) requested() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.paths...)
}

func startKubectlServer(t *testing.T, v3 bool) (*httptest.Server, *kubectlServer) {
	t.Helper()
	oa, err := Handler()
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	rec := &kubectlServer{}
	fixed := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/api", fixed(fakeAPIVersions))
	mux.Handle("/apis", fixed(fakeAPIGroups))
	mux.Handle("/api/v1", fixed(fakeResources))
	mux.Handle("/openapi/", oa)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.paths = append(rec.paths, r.URL.Path)
		rec.mu.Unlock()
		if !v3 && strings.HasPrefix(r.URL.Path, "/openapi/v3") {
			http.NotFound(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// runKubectl runs kubectl against url with a private HOME, so no kubeconfig and no
// discovery/OpenAPI disk cache is shared between runs.
func runKubectl(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--server", url}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	dir := t.TempDir()
	files := map[string]string{"valid.yaml": validPod, "unknown.yaml": unknownFieldPod}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	tests := []struct {
		name        string
		v3          bool
		args        []string
		wantErr     bool
		wantContain []string
		wantFetched string
	}{
		{"explain v3", true, []string{"explain", "pods.spec.containers"}, false, []string{"image"}, "/openapi/v3/api/v1"},
		{"explain v2", false, []string{"explain", "pods.spec.containers"}, false, []string{"image"}, "/openapi/v2"},
		{"create valid v3", true, []string{"create", "-f", filepath.Join(dir, "valid.yaml"), "--dry-run=client", "-o", "name"}, false, []string{"pod/nginx"}, "/openapi/v3/api/v1"},
		{"create unknown field v3", true, []string{"create", "-f", filepath.Join(dir, "unknown.yaml"), "--dry-run=client", "-o", "name"}, true, []string{"imagee"}, "/openapi/v3/api/v1"},
		{"create valid v2", false, []string{"create", "-f", filepath.Join(dir, "valid.yaml"), "--dry-run=client", "-o", "name"}, false, []string{"pod/nginx"}, "/openapi/v2"},
		{"create unknown field v2", false, []string{"create", "-f", filepath.Join(dir, "unknown.yaml"), "--dry-run=client", "-o", "name"}, true, []string{"imagee"}, "/openapi/v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := startKubectlServer(t, tt.v3)
			out, err := runKubectl(t, srv.URL, tt.args...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("kubectl %v: err = %v, wantErr %v\n%s", tt.args, err, tt.wantErr, out)
			}
			for _, want := range tt.wantContain {
				if !strings.Contains(out, want) {
					t.Errorf("output does not mention %q:\n%s", want, out)
				}
			}
			requested := rec.requested()
			if !slices.Contains(requested, tt.wantFetched) {
				t.Errorf("kubectl did not fetch %s; requested %v", tt.wantFetched, requested)
			}
			t.Logf("kubectl %s (requested %v):\n%s", strings.Join(tt.args, " "), requested, firstLines(out, 3))
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
