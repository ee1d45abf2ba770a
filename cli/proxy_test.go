package cli

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/rest"
)

func TestProxyPath(t *testing.T) {
	tests := []struct{ name, server, prefix, in, want string }{
		{"root prefix", "", "/", "/api/v1/pods", "/api/v1/pods"},
		{"custom prefix", "", "/k8s/", "/k8s/api/v1/pods", "/api/v1/pods"},
		{"server under a path", "/base", "/", "/api", "/base/api"},
		{"trailing slash kept", "", "/", "/api/", "/api/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := proxyPath(tt.server, tt.prefix, tt.in); got != tt.want {
				t.Fatalf("proxyPath = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProxyFilter(t *testing.T) {
	f, err := (&proxyCmd{}).filter()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, host, path string
		ok                       bool
	}{
		{"local get", "GET", "127.0.0.1:8001", "/api/v1/pods", true},
		{"localhost", "GET", "localhost:8001", "/api", true},
		{"ipv6 loopback", "GET", "[::1]:8001", "/api", true},
		{"foreign host", "GET", "evil.example:8001", "/api", false},
		{"exec", "POST", "localhost", "/api/v1/namespaces/default/pods/x/exec", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok, why := f.allows(tt.method, tt.host, tt.path); ok != tt.ok {
				t.Fatalf("allows = %v (%s), want %v", ok, why, tt.ok)
			}
		})
	}
}

// TestProxyAddsCredentials puts the proxy in front of a server that wants a bearer
// token and checks what arrives there.
func TestProxyAddsCredentials(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, r.Method+" "+r.URL.RequestURI())
	}))
	defer upstream.Close()
	target, err := url.Parse(upstream.URL + "/base")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(&rest.Config{Host: upstream.URL, BearerToken: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	www := t.TempDir()
	if err := os.WriteFile(filepath.Join(www, "index.txt"), []byte("static"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := (&proxyCmd{}).filter()
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	h, err := newProxyHandler(target, rt, "/k8s/", f, www, "/static/", log)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	tests := []struct {
		name, host, path string
		code             int
		body             string
	}{
		{"api with credentials", "", "/k8s/api/v1/pods?watch=true", 200, "GET /base/api/v1/pods?watch=true"},
		{"static files", "", "/static/index.txt", 200, "static"},
		{"outside the prefix", "", "/api/v1/pods", 404, "404 page not found\n"},
		{"foreign host", "evil.example", "/k8s/api", 403, "Forbidden\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", proxy.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code || string(body) != tt.body {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, body, tt.code, tt.body)
			}
		})
	}
}

// TestProxyStreamsWatch watches pods through the proxy on a real server: the event
// of a pod created afterwards arrives while the response is still open.
func TestProxyStreamsWatch(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	srv := startServer(t)
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(srv)
	h, err := newProxyHandler(target, http.DefaultTransport, "/", nil, "", "/static/", logrus.New())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	resp, err := http.Get(proxy.URL + "/api/v1/namespaces/default/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, errOut, code := runCLI(t, kc, "run", "watched", "--image=nginx", "--restart=Never", "--server", proxy.URL); code != 0 {
		t.Fatal(errOut)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"ADDED"`) || !strings.Contains(line, `"watched"`) {
		t.Fatalf("first event %q, %v", line, err)
	}
}

// TestUnderscoreFlags parses this file's commands with `_` for `-` in every flag.
func TestUnderscoreFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(r *root) bool
	}{
		{"apply", []string{"apply", "-f", "x.yaml", "--dry_run=server", "--no_overwrite", "--output=name"}, func(r *root) bool {
			return r.Apply.DryRun == "server" && !r.Apply.Overwrite && r.Apply.Filename[0] == "x.yaml"
		}},
		{"proxy", []string{"proxy", "--port=0", "--api_prefix=/k8s/", "--www=/tmp", "--www_prefix=/s/", "--accept_hosts=.*", "--accept_paths=^/api", "--reject_paths=^/x", "--reject_methods=^POST$", "--disable_filter"}, func(r *root) bool {
			p := r.Proxy
			return p.Port == 0 && p.APIPrefix == "/k8s/" && p.WWWPrefix == "/s/" && p.AcceptHosts == ".*" && p.AcceptPaths == "^/api" && p.RejectPaths == "^/x" && p.RejectMethods == "^POST$" && p.DisableFilter
		}},
		{"get --watch_only", []string{"get", "pods", "--watch_only", "--output=yaml"}, func(r *root) bool { return r.Get.WatchOnly }},
		{"__complete", []string{"__complete", "--kubeconfig=k", "--", "get", "--field_selector", "x"}, func(r *root) bool {
			return r.Complete.Kubeconfig == "k" && len(r.Complete.Words) == 3
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r root
			parser, err := kong.New(&r)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parser.Parse(reorder(normalizeFlags(tt.args), flagArity(parser.Model), passthroughAt(parser.Model))); err != nil {
				t.Fatal(err)
			}
			if !tt.check(&r) {
				t.Fatalf("flags not set: %+v", r)
			}
		})
	}
}
