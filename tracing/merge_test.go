package tracing

import (
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// TestBuildHistoryOfSpansOf: a history turned back into spans (SpansOf) and built
// again (BuildHistory) is the same history, with the repeats a second answer adds
// removed (Dedupe).
func TestBuildHistoryOfSpansOf(t *testing.T) {
	t0 := time.Unix(3000, 0)
	span := func(tr, id, parent byte, obj string, attrs ...attribute.KeyValue) Span {
		sp := Span{TraceID: tid(tr), SpanID: sid(id), Name: "s", Object: obj, Attrs: attrs,
			Start: t0.Add(time.Duration(id) * time.Millisecond), End: t0.Add(time.Duration(2*id) * time.Millisecond)}
		if parent != 0 {
			sp.Parent = sid(parent)
		}
		if obj != "" {
			sp.Attrs = append(sp.Attrs, ObjectKey.String(obj))
		}
		return sp
	}
	tests := []struct {
		name  string
		spans []Span
		key   string
	}{
		{name: "nothing", key: "pods/a"},
		{name: "one tree with attributes", key: "pods/a", spans: []Span{span(1, 1, 0, ""),
			span(1, 2, 1, "pods/a", attribute.Int("n", 3)), span(1, 3, 2, "pods/b", attribute.Bool("ok", true))}},
		{name: "two traces, unrelated spans dropped", key: "pods/a", spans: []Span{span(1, 1, 0, "pods/a"),
			span(2, 2, 0, "pods/b"), span(3, 3, 0, "pods/a"), span(3, 4, 0, "")}},
		{name: "an orphan's parent elsewhere", key: "pods/a", spans: []Span{span(1, 5, 4, "pods/a")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := NewStore(16)
			for _, sp := range tc.spans {
				st.Add(sp)
			}
			want := st.History(tc.key)
			spans := SpansOf(want)
			got := BuildHistory(Dedupe(append(spans, spans...)), tc.key)
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if string(wj) != string(gj) {
				t.Errorf("rebuilt:\n%s\nwant\n%s", gj, wj)
			}
		})
	}
	if n := len(Dedupe([]Span{{TraceID: tid(1), SpanID: sid(1)}, {TraceID: tid(2), SpanID: sid(1)}, {TraceID: tid(1), SpanID: sid(1)}})); n != 2 {
		t.Errorf("dedupe kept %d spans, want 2 (same span id, another trace, is another span)", n)
	}
}
