package tracing

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

func tid(n byte) trace.TraceID { return trace.TraceID{n} }
func sid(n byte) trace.SpanID  { return trace.SpanID{n} }

func TestStoreBoundedAndIndexed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	span := func(tr, id, parent byte, obj string) Span {
		sp := Span{TraceID: tid(tr), SpanID: sid(id), Parent: sid(parent), Name: fmt.Sprintf("s%d", id),
			Start: t0.Add(time.Duration(id) * time.Millisecond), End: t0.Add(time.Duration(id+1) * time.Millisecond), Object: obj}
		if parent == 0 {
			sp.Parent = trace.SpanID{}
		}
		return sp
	}
	tests := []struct {
		name      string
		capacity  int
		spans     []Span
		wantLen   int
		trace     byte
		wantTrace []string
		object    string
		wantObj   []string
	}{
		{name: "under capacity", capacity: 4,
			spans:   []Span{span(1, 1, 0, ""), span(1, 2, 1, "pods/a"), span(2, 3, 0, "pods/a")},
			wantLen: 3, trace: 1, wantTrace: []string{"s1", "s2"}, object: "pods/a", wantObj: []string{"s2", "s3"}},
		{name: "oldest evicted from both indexes", capacity: 2,
			spans:   []Span{span(1, 1, 0, "pods/a"), span(1, 2, 1, "pods/a"), span(2, 3, 0, "pods/b")},
			wantLen: 2, trace: 1, wantTrace: []string{"s2"}, object: "pods/a", wantObj: []string{"s2"}},
		{name: "a trace wholly evicted", capacity: 1,
			spans:   []Span{span(1, 1, 0, "pods/a"), span(2, 2, 0, "pods/b")},
			wantLen: 1, trace: 1, wantTrace: nil, object: "pods/a", wantObj: nil},
		{name: "unknown object", capacity: 3, spans: []Span{span(1, 1, 0, "pods/a")},
			wantLen: 1, trace: 1, wantTrace: []string{"s1"}, object: "pods/zz", wantObj: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(tc.capacity)
			for _, sp := range tc.spans {
				s.Add(sp)
			}
			if s.Len() != tc.wantLen {
				t.Errorf("len %d, want %d", s.Len(), tc.wantLen)
			}
			if got := spanNames(s.Trace(tid(tc.trace))); fmt.Sprint(got) != fmt.Sprint(tc.wantTrace) {
				t.Errorf("trace: %v, want %v", got, tc.wantTrace)
			}
			if got := spanNames(s.Object(tc.object)); fmt.Sprint(got) != fmt.Sprint(tc.wantObj) {
				t.Errorf("object: %v, want %v", got, tc.wantObj)
			}
			if len(s.byTrace) > tc.capacity || len(s.byObj) > tc.capacity {
				t.Errorf("indexes grow: %d traces, %d objects", len(s.byTrace), len(s.byObj))
			}
		})
	}
}

func spanNames(spans []Span) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, sp.Name)
	}
	return out
}

// TestHistoryKeepsTheObjectsLineage: a trace with two branches; the history of the
// object on one branch has its ancestors and descendants, not the other branch.
func TestHistoryKeepsTheObjectsLineage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := NewStore(100)
	add := func(id, parent byte, name, obj string) {
		sp := Span{TraceID: tid(9), SpanID: sid(id), Name: name, Start: t0.Add(time.Duration(id) * time.Millisecond),
			End: t0.Add(time.Duration(id)*time.Millisecond + 500*time.Microsecond), Object: obj,
			Attrs: []attribute.KeyValue{ObjectKey.String(obj)}}
		if parent != 0 {
			sp.Parent = sid(parent)
		}
		s.Add(sp)
	}
	// in the order they end: a round may end before the create that caused it
	add(5, 3, "round a", "pods/ns/a")
	add(7, 3, "store apply", "")
	add(3, 2, "pod a create", "pods/ns/a")
	add(4, 2, "pod b create", "pods/ns/b")
	add(6, 5, "store apply", "")
	add(2, 1, "rc sync", "replicationcontrollers/ns/rc")
	add(1, 0, "request", "")
	h := s.History("pods/ns/a")
	if len(h) != 1 {
		t.Fatalf("%d traces", len(h))
	}
	var flat []string
	var walk func(ns []*Node, depth int)
	walk = func(ns []*Node, depth int) {
		for _, n := range ns {
			flat = append(flat, fmt.Sprintf("%d:%s@%v", depth, n.Name, n.StartOffset))
			walk(n.Children, depth+1)
		}
	}
	walk(h[0].Roots, 0)
	want := "[0:request@0s 1:rc sync@1ms 2:pod a create@2ms 3:round a@4ms 4:store apply@5ms 3:store apply@6ms]"
	if fmt.Sprint(flat) != want {
		t.Errorf("history %v, want %s", flat, want)
	}
}

// TestTracerSamplesAndRemembers: spans reach the store when sampled, never when not;
// Remember/Recall/Forget; a nil Tracer is a no-op.
func TestTracerSamplesAndRemembers(t *testing.T) {
	for _, ratio := range []float64{0, 1} {
		tr, err := New(Options{Sampling: ratio, Capacity: 10})
		if err != nil {
			t.Fatal(err)
		}
		_, sp := tr.Start(context.Background(), "x", trace.WithAttributes(ObjectKey.String("pods/ns/x")))
		sp.End()
		if got, want := len(tr.Store().Object("pods/ns/x")), int(ratio); got != want {
			t.Errorf("ratio %v: %d spans kept, want %d", ratio, got, want)
		}
		tr.Remember("pods/ns/x", sp.SpanContext())
		if !tr.Recall("pods/ns/x").Equal(sp.SpanContext()) {
			t.Errorf("recall")
		}
		tr.Forget("pods/ns/x")
		if tr.Recall("pods/ns/x").IsValid() {
			t.Errorf("forget")
		}
	}
	if _, err := New(Options{Sampling: 2}); err == nil {
		t.Error("sampling 2 accepted")
	}
	var nilTracer *Tracer
	_, sp := nilTracer.Start(context.Background(), "x")
	sp.End()
	if sp.IsRecording() || nilTracer.Store() != nil || nilTracer.Recall("k").IsValid() {
		t.Error("nil tracer records")
	}
}
