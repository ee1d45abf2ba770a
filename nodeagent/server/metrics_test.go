package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kubeactor/kubeactor/nodeagent/metrics"
	"github.com/kubeactor/kubeactor/nodeagent/server"
	"github.com/kubeactor/kubeactor/nodeagent/server/servertest"
)

// GET /metrics is served on the agent's port and on its read-only port, when the
// agent has metrics.
func TestMetricsOnBothPorts(t *testing.T) {
	m := metrics.New()
	m.CountRunning(func() (int, int) { return 2, 3 })
	s := server.New(server.Config{NodeName: "n1", Runtime: servertest.NewRuntime(), Host: &servertest.Host{}, Metrics: m.Handler()})
	bare := server.New(server.Config{NodeName: "n1", Runtime: servertest.NewRuntime(), Host: &servertest.Host{}})
	for _, tt := range []struct {
		name    string
		handler http.Handler
		code    int
	}{
		{"agent port", s.Handler(), http.StatusOK},
		{"read-only port", s.ReadOnlyHandler(), http.StatusOK},
		{"no metrics", bare.ReadOnlyHandler(), http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.code {
				t.Fatalf("GET /metrics: %d, want %d", rec.Code, tt.code)
			}
			if tt.code == http.StatusOK && !strings.Contains(string(body), "kubelet_running_pods 2\n") {
				t.Errorf("no kubelet_running_pods 2 in %.300s", body)
			}
		})
	}
}
