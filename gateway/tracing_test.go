package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kubeactor/kubeactor/tracing"
)

// TestTraceparent: a request's W3C traceparent is continued (its trace id is the
// Audit-Id and the trace of the spans kept), and the response names the request's
// own span in a traceparent of the same trace; without one a new trace starts.
func TestTraceparent(t *testing.T) {
	tr, err := tracing.New(tracing.Options{Sampling: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{tracer: tr})
	const in = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name      string
		header    []string
		wantTrace string // "" : any new trace
	}{
		{name: "continued", header: []string{"traceparent", in}, wantTrace: "4bf92f3577b34da6a3ce929d0e0e4736"},
		{name: "new trace", header: nil},
		{name: "malformed is ignored", header: []string{"traceparent", "00-zz-yy-01"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := []string{"tp-a", "tp-b", "tp-c"}[i]
			code, body, hdr := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json",
				`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+name+`"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, tc.header...)
			if code != http.StatusCreated {
				t.Fatalf("code %d: %s", code, body)
			}
			out := strings.Split(hdr.Get("traceparent"), "-")
			if len(out) != 4 || len(out[1]) != 32 || len(out[2]) != 16 || out[3] != "01" {
				t.Fatalf("traceparent %q", hdr.Get("traceparent"))
			}
			if tc.wantTrace != "" && out[1] != tc.wantTrace {
				t.Errorf("trace %s, want %s", out[1], tc.wantTrace)
			}
			if out[2] == "00f067aa0ba902b7" {
				t.Errorf("the response names the caller's span, not the request's")
			}
			if got := hdr.Get("Audit-Id"); got != out[1] {
				t.Errorf("Audit-Id %q, trace %s", got, out[1])
			}
			// The request's span ends once its response is written, which may be after
			// the client has read it: wait for the trace to be kept.
			var hist TraceHistory
			eventually(t, "the request's trace kept", func() bool {
				code, body, _ = h.do(http.MethodGet, TracesPath+"/pods/default/"+name, "", "")
				hist = TraceHistory{}
				return code == http.StatusOK && json.Unmarshal([]byte(body), &hist) == nil && len(hist.Traces) > 0
			})
			if len(hist.Traces) != 1 || hist.Traces[0].TraceID != out[1] || len(hist.Traces[0].Roots) != 1 {
				t.Fatalf("history %s", body)
			}
			req := hist.Traces[0].Roots[0]
			if req.SpanID != out[2] || !strings.HasPrefix(req.Name, "POST /api/v1/namespaces/:namespace/pods") ||
				len(req.Children) != 1 || req.Children[0].Name != "pods create" ||
				len(req.Children[0].Children) != 1 || req.Children[0].Children[0].Name != "store apply" {
				t.Errorf("request span %+v %s", req, body)
			}
			if tc.wantTrace != "" && req.ParentID != "00f067aa0ba902b7" {
				t.Errorf("parent %q", req.ParentID)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		for path, want := range map[string]int{
			TracesPath + "/nothings/default/x": http.StatusNotFound,
			TracesPath + "/pods/x":             http.StatusBadRequest,
			TracesPath + "/nodes/default/x":    http.StatusBadRequest,
			TracesPath + "/nodes/n1":           http.StatusOK,
			ExplainPath + "/pods/default/none": http.StatusNotFound,
		} {
			if code, body, _ := h.do(http.MethodGet, path, "", ""); code != want {
				t.Errorf("%s: %d, want %d: %s", path, code, want, body)
			}
		}
	})
}

// TestExplainPod: a pending pod's explanation says it is not scheduled.
func TestExplainPod(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`); code != http.StatusCreated {
		t.Fatalf("%d %s", code, body)
	}
	code, body, _ := h.do(http.MethodGet, ExplainPath+"/pods/default/p", "", "")
	var x Explanation
	if code != http.StatusOK || json.Unmarshal([]byte(body), &x) != nil {
		t.Fatalf("%d %s", code, body)
	}
	if x.Object != "pods/default/p" || !strings.Contains(strings.Join(x.Lines, "\n"), "not scheduled yet") {
		t.Errorf("explanation %+v", x)
	}
}
