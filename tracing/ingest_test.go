package tracing

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestDecode(t *testing.T) {
	id := func(n int, b byte) []byte { return []byte(strings.Repeat(string(rune(b)), n)) }
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	span := func(traceID, spanID []byte, attrs ...*commonpb.KeyValue) *tracepb.Span {
		return &tracepb.Span{TraceId: traceID, SpanId: spanID, ParentSpanId: id(8, 'p'), Name: "pod sync",
			StartTimeUnixNano: 1e9, EndTimeUnixNano: 2e9, Attributes: attrs}
	}
	req := func(node string, spans ...*tracepb.Span) []byte {
		r := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
			Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str(string(NodeKey), node)}},
			ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
		}}}
		b, err := proto.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	many := make([]*commonpb.KeyValue, 40)
	for i := range many {
		many[i] = str(fmt.Sprintf("k%d", i), strings.Repeat("v", 2000))
	}
	tooMany := make([]*tracepb.Span, MaxIngestSpans+1)
	for i := range tooMany {
		tooMany[i] = span(id(16, 't'), id(8, 's'))
	}
	tests := []struct {
		name     string
		body     []byte
		wantErr  bool
		wantN    int
		wantObj  string
		wantNode string
		maxAttrs int
	}{
		{name: "a span about a pod", body: req("n1", span(id(16, 't'), id(8, 's'), str(string(ObjectKey), "pods/default/web"))),
			wantN: 1, wantObj: "pods/default/web", wantNode: "n1", maxAttrs: 2},
		{name: "invalid ids are skipped", body: req("n1", span(id(15, 't'), id(8, 's')), span(id(16, 0), id(8, 's')),
			span(id(16, 't'), id(8, 0)), span(id(16, 't'), id(8, 's'))), wantN: 1, wantNode: "n1", maxAttrs: 1},
		{name: "attributes are capped", body: req("", span(id(16, 't'), id(8, 's'), many...)), wantN: 1, maxAttrs: maxAttrs},
		{name: "too many spans", body: req("n1", tooMany...), wantErr: true},
		{name: "not protobuf", body: []byte("\xff\xff\xff"), wantErr: true},
		{name: "empty", body: nil, wantN: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.body)
			if tc.wantErr {
				if !errors.Is(err, ErrIngest) {
					t.Fatalf("err %v, want ErrIngest", err)
				}
				return
			}
			if err != nil || len(got) != tc.wantN {
				t.Fatalf("got %d spans, %v; want %d", len(got), err, tc.wantN)
			}
			for _, sp := range got {
				if sp.Object != tc.wantObj || sp.Name != "pod sync" || sp.Start.UnixNano() != 1e9 || sp.End.UnixNano() != 2e9 ||
					!sp.Parent.IsValid() || len(sp.Attrs) > tc.maxAttrs {
					t.Errorf("span %+v", sp)
				}
				node := ""
				for _, kv := range sp.Attrs {
					if len(kv.Value.AsString()) > maxValue {
						t.Errorf("attribute %s not cut: %d bytes", kv.Key, len(kv.Value.AsString()))
					}
					if kv.Key == NodeKey {
						node = kv.Value.AsString()
					}
				}
				if node != tc.wantNode {
					t.Errorf("node %q, want %q", node, tc.wantNode)
				}
			}
		})
	}
}
