package gateway

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	oteltrace "go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kubeactor/kubeactor/tracing"
)

// TestAgentTracingPaths: the last-write path answers the traceparent of a pod's
// create (the trace a node agent continues); the spans path keeps an agent's OTLP
// spans, which the traces path then shows below the server's span they continue,
// naming the node; bad requests get a Status and keep nothing; neither path is a
// span itself.
func TestAgentTracingPaths(t *testing.T) {
	tr, err := tracing.New(tracing.Options{Sampling: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{tracer: tr})
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"lw"},"spec":{"containers":[{"name":"c","image":"i"}]}}`,
		"traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	hist := history(t, h, "pods/default/lw")
	create := find(hist.Traces[0].Roots, "pods create")
	if create == nil {
		t.Fatalf("no pods create span: %+v", hist)
	}

	for _, tc := range []struct {
		path string
		code int
		want string // the traceparent answered
	}{
		{LastWritePath + "/pods/default/lw", http.StatusOK, "00-" + trace + "-" + create.SpanID + "-01"},
		{LastWritePath + "/pods/default/none", http.StatusOK, ""},
		{LastWritePath + "/nothings/default/x", http.StatusNotFound, ""},
		{LastWritePath + "/pods/x", http.StatusBadRequest, ""},
	} {
		code, body, _ := h.do(http.MethodGet, tc.path, "", "")
		if code != tc.code {
			t.Errorf("GET %s: %d, want %d: %s", tc.path, code, tc.code, body)
			continue
		}
		if code != http.StatusOK {
			continue
		}
		var lw LastWrite
		if err := json.Unmarshal([]byte(body), &lw); err != nil || lw.Traceparent != tc.want {
			t.Errorf("GET %s: %s (%v), want traceparent %q", tc.path, body, err, tc.want)
		}
	}

	// The agent's spans in the pod's trace: what a POST to the spans path adds (the
	// pod's own actors may still end spans of the trace meanwhile, under other names;
	// the path itself is never a span: tracing.go).
	tid, err := oteltrace.TraceIDFromHex(trace)
	if err != nil {
		t.Fatal(err)
	}
	agentSpans := func() int {
		n := 0
		for _, sp := range tr.Store().Trace(tid) {
			if sp.Name == "pod sync" || sp.Name == "container start" {
				n++
			}
		}
		return n
	}
	sync := otlpSpan(trace, "1111111111111111", create.SpanID, "pod sync", "k8s.object", "pods/default/lw")
	start := otlpSpan(trace, "2222222222222222", "1111111111111111", "container start", "container.id", "abc")
	good, err := proto.Marshal(otlpRequest("n1", sync, start))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, contentType, body string
		header                  []string
		code                    int
	}{
		{"json is refused", "application/json", "{}", nil, http.StatusUnsupportedMediaType},
		{"compressed is refused", "application/x-protobuf", string(good), []string{"Content-Encoding", "gzip"}, http.StatusBadRequest},
		{"not protobuf", "application/x-protobuf", "\xff\xff\xff not a message", nil, http.StatusBadRequest},
		{"too big", "application/x-protobuf", strings.Repeat("x", maxSpansBody+1), nil, http.StatusRequestEntityTooLarge},
	} {
		code, body, _ := h.do(http.MethodPost, SpansPath, tc.contentType, tc.body, tc.header...)
		if code != tc.code || !strings.Contains(body, `"kind":"Status"`) {
			t.Errorf("%s: %d %s, want a Status of %d", tc.name, code, body, tc.code)
		}
	}
	if n := agentSpans(); n != 0 {
		t.Fatalf("bad requests kept %d spans", n)
	}
	if code, body, _ := h.do(http.MethodPost, SpansPath, "application/x-protobuf", string(good)); code != http.StatusOK {
		t.Fatalf("spans: %d %s", code, body)
	}
	if n := agentSpans(); n != 2 {
		t.Errorf("spans kept %d, want the 2 sent", n)
	}
	hist = history(t, h, "pods/default/lw")
	ps := find(hist.Traces[0].Roots, "pod sync")
	if ps == nil || ps.ParentID != create.SpanID || ps.Attributes["k8s.node"] != "n1" ||
		len(ps.Children) != 1 || ps.Children[0].Name != "container start" || ps.Children[0].Attributes["container.id"] != "abc" {
		t.Errorf("the agent's spans are not below the pod's create: %+v", hist.Traces[0])
	}
}

func history(t *testing.T, h *harness, key string) TraceHistory {
	t.Helper()
	code, body, _ := h.do(http.MethodGet, TracesPath+"/"+key, "", "")
	var hist TraceHistory
	if err := json.Unmarshal([]byte(body), &hist); code != http.StatusOK || err != nil || len(hist.Traces) != 1 {
		t.Fatalf("traces of %s: %d %v %s", key, code, err, body)
	}
	return hist
}

func find(ns []*tracing.Node, name string) *tracing.Node {
	for _, n := range ns {
		if n.Name == name {
			return n
		}
		if f := find(n.Children, name); f != nil {
			return f
		}
	}
	return nil
}

func otlpSpan(traceID, spanID, parentID, name, key, value string) *tracepb.Span {
	b := func(s string) []byte { v, _ := hex.DecodeString(s); return v }
	now := uint64(time.Now().UnixNano())
	return &tracepb.Span{TraceId: b(traceID), SpanId: b(spanID), ParentSpanId: b(parentID), Name: name,
		StartTimeUnixNano: now, EndTimeUnixNano: now + 1000,
		Attributes: []*commonpb.KeyValue{{Key: key, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: value}}}}}
}

func otlpRequest(node string, spans ...*tracepb.Span) *coltrace.ExportTraceServiceRequest {
	return &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "k8s.node",
			Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: node}}}}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}}
}
