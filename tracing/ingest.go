package tracing

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Bounds of what Decode takes from another process (a node agent's spans).
const (
	MaxIngestSpans = 4096 // spans in one request
	maxAttrs       = 32   // attributes kept of a span
	maxValue       = 1024 // bytes kept of an attribute's value
)

// NodeKey names the node whose agent made a span (a resource attribute of the
// agent's spans, copied to each span so the trace shows it).
const NodeKey = attribute.Key("k8s.node")

// ErrIngest says a request of spans could not be read.
var ErrIngest = errors.New("tracing: bad spans")

// Decode reads an OTLP ExportTraceServiceRequest (protobuf), as a node agent sends
// its finished spans, into spans for Store.Add. Spans without valid ids are
// skipped; attributes are capped; more than MaxIngestSpans spans is an error.
func Decode(body []byte) ([]Span, error) {
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIngest, err)
	}
	var out []Span
	for _, rs := range req.GetResourceSpans() {
		var node string
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == string(NodeKey) {
				node = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if len(out) == MaxIngestSpans {
					return nil, fmt.Errorf("%w: more than %d spans in one request", ErrIngest, MaxIngestSpans)
				}
				sp, ok := fromOTLP(s.GetTraceId(), s.GetSpanId(), s.GetParentSpanId())
				if !ok {
					continue
				}
				sp.Name = cut(s.GetName())
				sp.Start = time.Unix(0, int64(s.GetStartTimeUnixNano()))
				sp.End = time.Unix(0, int64(s.GetEndTimeUnixNano()))
				for _, kv := range s.GetAttributes() {
					if len(sp.Attrs) == maxAttrs {
						break
					}
					a := attribute.String(cut(kv.GetKey()), cut(valueString(kv.GetValue())))
					if a.Key == ObjectKey {
						sp.Object = a.Value.AsString()
					}
					sp.Attrs = append(sp.Attrs, a)
				}
				if node != "" {
					sp.Attrs = append(sp.Attrs, NodeKey.String(cut(node)))
				}
				out = append(out, sp)
			}
		}
	}
	return out, nil
}

// fromOTLP reads a span's ids; ok is false when the trace or span id is invalid.
func fromOTLP(traceID, spanID, parentID []byte) (Span, bool) {
	var sp Span
	if len(traceID) != len(sp.TraceID) || len(spanID) != len(sp.SpanID) {
		return sp, false
	}
	copy(sp.TraceID[:], traceID)
	copy(sp.SpanID[:], spanID)
	if len(parentID) == len(sp.Parent) {
		copy(sp.Parent[:], parentID)
	}
	return sp, sp.TraceID.IsValid() && sp.SpanID.IsValid()
}

// valueString renders an attribute's value as the store shows it.
func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case nil:
		return ""
	default:
		return fmt.Sprint(v.GetValue())
	}
}

func cut(s string) string {
	if len(s) > maxValue {
		return s[:maxValue]
	}
	return s
}
