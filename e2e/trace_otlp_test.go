package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/tracing"
)

// TestOTLPExportFromServer: a server started with --otlp-endpoint and
// --trace-sampling 0 sends the collector (an in-test OTLP HTTP receiver that decodes
// each ExportTraceServiceRequest) the span of a request whose traceparent is
// sampled, as a child of the caller's span, and none of a request sent before it
// without a traceparent (sampling 0 starts no trace of its own). The response names
// the request's span in the caller's trace.
func TestOTLPExportFromServer(t *testing.T) {
	var (
		mu    sync.Mutex
		spans []tracing.Span
		bad   []string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var got []tracing.Span
		if err == nil {
			got, err = tracing.Decode(body)
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf":
			bad = append(bad, fmt.Sprintf("%s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type")))
		case err != nil:
			bad = append(bad, err.Error())
		default:
			spans = append(spans, got...)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK) // an empty ExportTraceServiceResponse
	}))
	defer collector.Close()

	s := StartServer(t, "", "--otlp-endpoint", collector.Listener.Addr().String(), "--trace-sampling", "0")
	get := func(target, traceparent string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, s.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if traceparent != "" {
			req.Header.Set("traceparent", traceparent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", target, resp.Status)
		}
		return resp
	}
	const tid, caller = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	get("/api/v1/namespaces/default/pods?labelSelector=unsampled", "")
	resp := get("/api/v1/namespaces/default/pods?labelSelector=sampled", "00-"+tid+"-"+caller+"-01")
	if tp := resp.Header.Get("traceparent"); !strings.HasPrefix(tp, "00-"+tid+"-") || strings.Contains(tp, caller) {
		t.Errorf("response traceparent %q: want a span of trace %s other than the caller's", tp, tid)
	}

	Eventually(t, 30*time.Second, "the sampled request's span at the collector", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("the collector got requests it cannot read: %v", bad)
		}
		for _, sp := range spans {
			if sp.TraceID.String() == tid && sp.Parent.String() == caller &&
				strings.HasPrefix(sp.Name, "GET /api/v1/namespaces/:namespace/pods") && attr(sp, "http.target") == "/api/v1/namespaces/default/pods?labelSelector=sampled" {
				return nil
			}
		}
		return fmt.Errorf("%d spans, none the request's: %v", len(spans), names(spans))
	})
	mu.Lock()
	defer mu.Unlock()
	for _, sp := range spans {
		if sp.TraceID.String() != tid {
			t.Errorf("span %q of trace %s exported: sampling 0 starts no trace", sp.Name, sp.TraceID)
		}
	}
}

func attr(sp tracing.Span, key string) string {
	for _, kv := range sp.Attrs {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

func names(spans []tracing.Span) []string {
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = sp.Name
	}
	return out
}
