package gateway

import (
	"net/http"
	"strings"
	"testing"
)

// TestProfiling: --profiling serves Go's profiles under /debug/pprof/ from handlers
// the gateway mounts itself; whatever else is on http.DefaultServeMux is not served.
func TestProfiling(t *testing.T) {
	http.DefaultServeMux.HandleFunc("GET /debug/pprof/from-default-mux", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("default mux"))
	})
	tests := []struct {
		name      string
		profiling bool
		path      string
		wantCode  int
		wantBody  string
	}{
		{"index", true, "/debug/pprof/", http.StatusOK, "goroutine"},
		{"named profile", true, "/debug/pprof/goroutine?debug=1", http.StatusOK, "goroutine profile:"},
		{"cmdline", true, "/debug/pprof/cmdline", http.StatusOK, ""},
		{"off", false, "/debug/pprof/", http.StatusNotFound, ""},
		{"not the default mux", true, "/debug/pprof/from-default-mux", http.StatusNotFound, "Unknown profile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{profiling: tc.profiling})
			code, body, _ := h.do(http.MethodGet, tc.path, "", "")
			if code != tc.wantCode || !strings.Contains(body, tc.wantBody) {
				t.Fatalf("GET %s = %d %.200q, want %d with %q", tc.path, code, body, tc.wantCode, tc.wantBody)
			}
		})
	}
}
