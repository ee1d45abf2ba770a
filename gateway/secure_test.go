package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/gateway/authn"
	"github.com/kubeactor/kubeactor/gateway/authz"
	"github.com/kubeactor/kubeactor/gateway/pki"
	"github.com/kubeactor/kubeactor/persistence"
)

// lockedBuffer collects the server's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// secureHarness is a gateway served on a TLS port with the book's users.
type secureHarness struct {
	url      string
	insecure string
	ca       *pki.CA
	log      *lockedBuffer
	seen     *noConnect
}

const (
	testTokens = "thomas,thomas,1\nadmin,admin,2\nsystem,system,3\ns3cr3t-token,bob,4\n"
	testBasic  = "thomas,thomas,1\npa55word,kubelet,5\n"
)

func newSecureHarness(t *testing.T) *secureHarness {
	t.Helper()
	out := &lockedBuffer{}
	log := logrus.New()
	log.SetLevel(logrus.DebugLevel)
	log.SetOutput(out)
	store, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject})
	if err != nil {
		t.Fatal(err)
	}
	seen := &noConnect{}
	sys, err := actors.Start(actors.Options{Store: store, Log: log, Admission: append(actors.DefaultAdmission(store), seen)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca, _, err := pki.NewCA("test-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := authn.ParseTokenFile([]byte(testTokens))
	if err != nil {
		t.Fatal(err)
	}
	basic, err := authn.ParseBasicFile([]byte(testBasic))
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := pki.Pool(ca.CertPEM)
	policy, err := authz.ParsePolicy([]byte(authz.BookPolicy + `{"user":"thomas"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: store, Actors: sys, Log: log, OpenAPI: http.NotFoundHandler(),
		Authenticator: &authn.Union{Members: []authn.Authenticator{authn.X509{Roots: roots}, tokens, basic}},
		Authorizer:    policy})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Serving("localhost", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv.SecureHandler())
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
	hs.StartTLS()
	plain := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		plain.Close()
		sys.Stop()
		_ = store.Close()
	})
	return &secureHarness{url: hs.URL, insecure: plain.URL, ca: ca, log: out, seen: seen}
}

// client is a clientset for the secure port with the given credentials.
func (h *secureHarness) client(t *testing.T, set func(*rest.Config)) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: h.url, QPS: -1, TLSClientConfig: rest.TLSClientConfig{CAData: h.ca.CertPEM}}
	set(cfg)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSecurePort(t *testing.T) {
	h := newSecureHarness(t)
	certPEM, keyPEM, err := h.ca.Client("alice", []string{"dev"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := pki.NewCA("other", time.Now())
	strangerCert, strangerKey, _ := other.Client("alice", nil, time.Now())

	tests := []struct {
		name      string
		set       func(*rest.Config)
		namespace string
		create    bool
		wantCode  int // 0: allowed
		wantMsg   string
		wantUser  string
	}{
		{name: "token", set: func(c *rest.Config) { c.BearerToken = "thomas" }, create: true, wantUser: "thomas"},
		{name: "basic", set: func(c *rest.Config) { c.Username, c.Password = "thomas", "thomas" }, create: true, wantUser: "thomas"},
		{name: "client certificate", set: func(c *rest.Config) { c.CertData, c.KeyData = certPEM, keyPEM }, create: true, wantUser: "alice"},
		{name: "wrong password", set: func(c *rest.Config) { c.Username, c.Password = "thomas", "pa55word" }, wantCode: http.StatusUnauthorized},
		{name: "unknown token", set: func(c *rest.Config) { c.BearerToken = "s3cr3t-nope" }, wantCode: http.StatusUnauthorized},
		{name: "certificate of another CA", set: func(c *rest.Config) { c.CertData, c.KeyData = strangerCert, strangerKey }, wantCode: http.StatusUnauthorized},
		{name: "anonymous", set: func(*rest.Config) {}, wantCode: http.StatusUnauthorized},
		{name: "bob reads pods in myNamespace", set: func(c *rest.Config) { c.BearerToken = "s3cr3t-token" }, namespace: "myNamespace"},
		{name: "bob may not read pods in default", set: func(c *rest.Config) { c.BearerToken = "s3cr3t-token" }, namespace: "default",
			wantCode: http.StatusForbidden, wantMsg: `pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"`},
		{name: "bob may not create pods", set: func(c *rest.Config) { c.BearerToken = "s3cr3t-token" }, namespace: "myNamespace", create: true,
			wantCode: http.StatusForbidden, wantMsg: `pods is forbidden: User "bob" cannot create resource "pods" in API group "" in the namespace "myNamespace"`},
		{name: "kubelet may read pods", set: func(c *rest.Config) { c.Username, c.Password = "kubelet", "pa55word" }, namespace: "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := h.client(t, tt.set)
			ns := tt.namespace
			if ns == "" {
				ns = "default"
			}
			ctx := testCtx(t)
			var err error
			name := strings.ReplaceAll(tt.name, " ", "-")
			if tt.create {
				_, err = c.CoreV1().Pods(ns).Create(ctx, newPod(name).ns(ns).obj(), metav1.CreateOptions{})
			} else {
				_, err = c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			}
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
			} else {
				st, ok := err.(apierrors.APIStatus)
				if !ok || int(st.Status().Code) != tt.wantCode {
					t.Fatalf("want %d, got %v", tt.wantCode, err)
				}
				if tt.wantMsg != "" && st.Status().Message != tt.wantMsg {
					t.Fatalf("message %q, want %q", st.Status().Message, tt.wantMsg)
				}
			}
			if tt.wantUser != "" {
				a, ok := h.seen.last("pods", name)
				if !ok || a.User.Name != tt.wantUser {
					t.Fatalf("admission saw user %+v, want %s", a.User, tt.wantUser)
				}
			}
		})
	}

	t.Run("insecure port skips both and admits anonymous", func(t *testing.T) {
		c, err := kubernetes.NewForConfig(&rest.Config{Host: h.insecure, QPS: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CoreV1().Pods("default").Create(testCtx(t), newPod("plain").obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if a, _ := h.seen.last("pods", "plain"); a.User.Name != admission.Anonymous.Name {
			t.Fatalf("user %+v", a.User)
		}
	})
	t.Run("a 401 is a Status", func(t *testing.T) {
		c := h.client(t, func(c *rest.Config) { c.BearerToken = "s3cr3t-nope" })
		body, err := c.CoreV1().RESTClient().Get().AbsPath("/version").DoRaw(testCtx(t))
		if !apierrors.IsUnauthorized(err) || !strings.Contains(string(body), `"kind":"Status"`) {
			t.Fatalf("got %v %s", err, body)
		}
	})
	t.Run("no secret in the log", func(t *testing.T) {
		logs := h.log.String()
		if !strings.Contains(logs, "request") {
			t.Fatal("no debug request lines were logged")
		}
		for _, secret := range []string{"s3cr3t", "pa55word", "thomas:thomas", "dGhvbWFzOnRob21hcw", "PRIVATE KEY"} {
			if strings.Contains(logs, secret) {
				t.Fatalf("the log holds %q", secret)
			}
		}
	})
}

// TestSecurePortChallenge: a 401 on the secure port carries kube-apiserver's
// WWW-Authenticate challenge when passwords are accepted, so a browser (the /ui
// dashboard) asks for them; an authenticated request gets none.
func TestSecurePortChallenge(t *testing.T) {
	h := newSecureHarness(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(h.ca.CertPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	tests := []struct {
		name           string
		user, password string
		wantCode       int
		wantChallenge  string
	}{
		{"wrong password", "thomas", "nope", http.StatusUnauthorized, `Basic realm="kubernetes-master"`},
		{"right password", "thomas", "thomas", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, h.url+"/api/v1/namespaces/default/pods", nil)
			req.SetBasicAuth(tt.user, tt.password)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode || resp.Header.Get("WWW-Authenticate") != tt.wantChallenge {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tt.wantCode, tt.wantChallenge)
			}
		})
	}
}
