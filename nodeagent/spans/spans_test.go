package spans

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in  string
		valid     bool
		sampled   bool
		wantTrace string
	}{
		{"sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, true, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"not sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true, false, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"empty", "", false, false, ""},
		{"malformed", "00-zz-yy-01", false, false, ""},
		{"zero trace", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := Parse(tc.in)
			if sc.IsValid() != tc.valid || sc.IsSampled() != tc.sampled || (tc.valid && sc.TraceID().String() != tc.wantTrace) {
				t.Errorf("Parse(%q) = %v valid %v sampled %v", tc.in, sc.TraceID(), sc.IsValid(), sc.IsSampled())
			}
			if tc.valid && !sc.IsRemote() {
				t.Errorf("Parse(%q) is not remote", tc.in)
			}
		})
	}
}

// TestOff: without a tracer nothing records, and Child makes no span.
func TestOff(t *testing.T) {
	var tr *Tracer
	ctx, sp := tr.Start(context.Background(), "pod sync")
	if tr.Enabled() || sp.IsRecording() {
		t.Fatal("a nil tracer records")
	}
	if _, c := Child(ctx, "container create"); c.IsRecording() {
		t.Error("Child of no span records")
	}
	remote := trace.ContextWithRemoteSpanContext(context.Background(), Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
	if _, c := Child(remote, "container create"); c.IsRecording() {
		t.Error("Child of a remote span context records")
	}
}

// TestTracer: spans continue a sampled remote parent whatever the ratio, an
// unsampled one is not recorded, Child spans use the parent's tracer, and ending
// many more spans than the queue holds while the server does not answer never
// blocks (the extra spans are dropped).
func TestTracer(t *testing.T) {
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hung }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hung) })
	tr, err := New(Options{Sampling: 0, Node: "n1", Server: srv.URL, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	sampled := trace.ContextWithRemoteSpanContext(context.Background(), Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
	unsampled := trace.ContextWithRemoteSpanContext(context.Background(), Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"))
	tests := []struct {
		name   string
		parent context.Context
		record bool
	}{
		{"continues a sampled trace", sampled, true},
		{"follows an unsampled trace", unsampled, false},
		{"new trace at ratio 0", context.Background(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, sp := tr.Start(tc.parent, "pod sync")
			defer sp.End()
			if sp.IsRecording() != tc.record {
				t.Fatalf("recording %v, want %v", sp.IsRecording(), tc.record)
			}
			_, c := Child(ctx, "container create")
			defer c.End()
			if c.IsRecording() != tc.record {
				t.Fatalf("child recording %v, want %v", c.IsRecording(), tc.record)
			}
			if tc.record && (c.SpanContext().TraceID() != sp.SpanContext().TraceID()) {
				t.Errorf("child in trace %v, parent in %v", c.SpanContext().TraceID(), sp.SpanContext().TraceID())
			}
		})
	}
	for i := 0; i < 3*QueueSize; i++ {
		_, sp := tr.Start(sampled, "pod sync")
		sp.End()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // do not wait for the hung server
	_ = tr.Shutdown(ctx)
}

// TestInject: a request made in a span's context carries its traceparent; one made
// without carries none.
func TestInject(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("traceparent") }))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: Inject{Next: http.DefaultTransport}}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"in a span", trace.ContextWithRemoteSpanContext(context.Background(), Parse(tp)), tp},
		{"without", context.Background(), ""},
	} {
		req, err := http.NewRequestWithContext(tc.ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := <-got; h != tc.want {
			t.Errorf("%s: traceparent %q, want %q", tc.name, h, tc.want)
		}
	}
}
