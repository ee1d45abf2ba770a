package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestOTLPExport: with an endpoint set, finished spans are posted to it as OTLP
// (protobuf over HTTP, path /v1/traces) by the time Shutdown returns: the receiver
// decodes the ExportTraceServiceRequest and finds the span.
func TestOTLPExport(t *testing.T) {
	var posts, bytes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			b, _ := io.ReadAll(r.Body)
			if spans, err := Decode(b); err == nil && len(spans) == 1 && spans[0].Name == "exported" {
				posts.Add(1)
				bytes.Add(int64(len(b)))
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	for _, endpoint := range []string{srv.URL + "/v1/traces", srv.Listener.Addr().String()} {
		posts.Store(0)
		tr, err := New(Options{Sampling: 1, OTLPEndpoint: endpoint})
		if err != nil {
			t.Fatal(err)
		}
		_, sp := tr.Start(context.Background(), "exported")
		sp.End()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = tr.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: shutdown: %v", endpoint, err)
		}
		if posts.Load() == 0 || bytes.Load() == 0 {
			t.Errorf("%s: nothing exported", endpoint)
		}
		if len(tr.Store().Trace(sp.SpanContext().TraceID())) != 1 {
			t.Errorf("%s: span not kept in memory too", endpoint)
		}
	}
}
