package apiclient

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeconfigCredentials: with a kubeconfig the client verifies the server with
// its CA and sends its credentials; --server, when given, wins over its cluster's.
func TestKubeconfigCredentials(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, server, user string) string {
		p := filepath.Join(dir, name)
		kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server + "\n    certificate-authority: " + caFile +
			"\nusers:\n- name: u\n  user:\n" + user + "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
		if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name   string
		opts   Options
		header string
	}{
		{name: "token", opts: Options{Kubeconfig: write("token", srv.URL, "    token: node-token\n")}, header: "Bearer node-token"},
		{name: "basic", opts: Options{Kubeconfig: write("basic", srv.URL, "    username: kubelet\n    password: pw\n")}, header: "Basic a3ViZWxldDpwdw=="},
		{name: "--server wins", opts: Options{Server: srv.URL, Kubeconfig: write("other", "https://127.0.0.1:1", "    token: t2\n")}, header: "Bearer t2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			tt.opts.QPS = -1
			c, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Clientset().CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			if err == nil || !apierrors.IsNotFound(err) {
				t.Fatalf("get node: %v, want the server's 404 (the TLS handshake with the kubeconfig's CA worked)", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 || seen[0] != tt.header {
				t.Fatalf("Authorization %q, want %q", seen, tt.header)
			}
		})
	}
}
