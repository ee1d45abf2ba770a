package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sirupsen/logrus"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kubeactor/kubeactor/nodeagent/server"
	"github.com/kubeactor/kubeactor/nodeagent/server/servertest"
)

type fixedSummary struct {
	s  statsapi.Summary
	ok bool
}

func (f fixedSummary) Summary() (statsapi.Summary, bool) { return f.s, f.ok }

// TestSummaryOnBothPorts: /stats/summary serves the collector's last Summary on the
// main and the read-only port, and 503 before the first collection or without one.
func TestSummaryOnBothPorts(t *testing.T) {
	nc := uint64(250_000_000)
	sum := statsapi.Summary{Node: statsapi.NodeStats{NodeName: "n1", CPU: &statsapi.CPUStats{UsageNanoCores: &nc}},
		Pods: []statsapi.PodStats{{PodRef: statsapi.PodReference{Name: "web", Namespace: "default", UID: "u1"}}}}
	tests := []struct {
		name     string
		src      server.SummarySource
		wantCode int
	}{
		{"collected", fixedSummary{sum, true}, http.StatusOK},
		{"not yet collected", fixedSummary{}, http.StatusServiceUnavailable},
		{"no collector", nil, http.StatusServiceUnavailable},
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server.New(server.Config{NodeName: "n1", Runtime: servertest.NewRuntime(), Host: &servertest.Host{}, Log: log, Summary: tt.src})
			for port, h := range map[string]http.Handler{"main": s.Handler(), "read-only": s.ReadOnlyHandler()} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/stats/summary", nil))
				if rec.Code != tt.wantCode {
					t.Fatalf("%s port: code %d, want %d: %s", port, rec.Code, tt.wantCode, rec.Body)
				}
				if tt.wantCode != http.StatusOK {
					continue
				}
				var got statsapi.Summary
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				if got.Node.NodeName != "n1" || *got.Node.CPU.UsageNanoCores != nc || len(got.Pods) != 1 || got.Pods[0].PodRef.Name != "web" {
					t.Errorf("%s port: summary %+v", port, got)
				}
			}
		})
	}
}
