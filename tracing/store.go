package tracing

import (
	"context"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Span is a finished span as the store keeps it.
type Span struct {
	TraceID trace.TraceID
	SpanID  trace.SpanID
	Parent  trace.SpanID // zero for a root
	Name    string
	Start   time.Time
	End     time.Time
	Attrs   []attribute.KeyValue
	Object  string // the ObjectKey attribute, or ""
}

// Store keeps the last Capacity finished sampled spans in a ring, indexed by trace id
// and by object key. It is a sdktrace.SpanProcessor. Safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	ring    []Span
	next    uint64 // sequence number of the next span; span s is in ring[s%len]
	byTrace map[trace.TraceID][]uint64
	byObj   map[string][]uint64
}

var _ sdktrace.SpanProcessor = (*Store)(nil)

// NewStore returns a store of capacity spans (0: DefaultCapacity).
func NewStore(capacity int) *Store {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Store{ring: make([]Span, capacity), byTrace: make(map[trace.TraceID][]uint64),
		byObj: make(map[string][]uint64)}
}

// OnStart does nothing: spans are kept when they end.
func (s *Store) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps a finished sampled span.
func (s *Store) OnEnd(ro sdktrace.ReadOnlySpan) {
	sc := ro.SpanContext()
	if !sc.IsSampled() {
		return
	}
	sp := Span{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Parent: ro.Parent().SpanID(), Name: ro.Name(),
		Start: ro.StartTime(), End: ro.EndTime(), Attrs: ro.Attributes()}
	for _, kv := range sp.Attrs {
		if kv.Key == ObjectKey {
			sp.Object = kv.Value.AsString()
			break
		}
	}
	s.Add(sp)
}

// Add keeps sp, evicting the oldest span when full.
func (s *Store) Add(sp Span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := uint64(len(s.ring))
	seq := s.next
	s.next++
	slot := &s.ring[seq%n]
	if seq >= n { // evict the span in the slot: it is the oldest of its trace and object
		old := seq - n
		s.byTrace[slot.TraceID] = popFront(s.byTrace[slot.TraceID], old)
		if len(s.byTrace[slot.TraceID]) == 0 {
			delete(s.byTrace, slot.TraceID)
		}
		if slot.Object != "" {
			s.byObj[slot.Object] = popFront(s.byObj[slot.Object], old)
			if len(s.byObj[slot.Object]) == 0 {
				delete(s.byObj, slot.Object)
			}
		}
	}
	*slot = sp
	s.byTrace[sp.TraceID] = append(s.byTrace[sp.TraceID], seq)
	if sp.Object != "" {
		s.byObj[sp.Object] = append(s.byObj[sp.Object], seq)
	}
}

func popFront(l []uint64, seq uint64) []uint64 {
	if len(l) > 0 && l[0] == seq {
		l = l[1:]
	}
	return l
}

// Len is the number of spans kept.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(min(s.next, uint64(len(s.ring))))
}

func (s *Store) get(seqs []uint64) []Span {
	out := make([]Span, len(seqs))
	for i, q := range seqs {
		out[i] = s.ring[q%uint64(len(s.ring))]
	}
	return out
}

// Trace returns the spans kept of trace id, oldest first.
func (s *Store) Trace(id trace.TraceID) []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get(s.byTrace[id])
}

// Object returns the spans kept whose ObjectKey is key, oldest first.
func (s *Store) Object(key string) []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get(s.byObj[key])
}

// History returns the story of the object key: for each trace that has a span about
// it, those spans, their ancestors and their descendants, as trees; the most recent
// trace last.
func (s *Store) History(key string) []Trace {
	s.mu.Lock()
	defer s.mu.Unlock()
	var order []trace.TraceID
	seen := map[trace.TraceID]bool{}
	for _, sp := range s.get(s.byObj[key]) {
		if !seen[sp.TraceID] {
			seen[sp.TraceID] = true
			order = append(order, sp.TraceID)
		}
	}
	out := make([]Trace, 0, len(order))
	for _, id := range order {
		out = append(out, related(s.get(s.byTrace[id]), key))
	}
	return out
}

// Trace is one trace's spans as a forest, in start order.
type Trace struct {
	TraceID string    `json:"traceId"`
	Start   time.Time `json:"start"`
	Roots   []*Node   `json:"spans"`
}

// Node is a span in a tree.
type Node struct {
	SpanID      string            `json:"spanId"`
	ParentID    string            `json:"parentId,omitempty"`
	Name        string            `json:"name"`
	StartOffset time.Duration     `json:"startOffsetNanos"` // from the trace's first span
	Duration    time.Duration     `json:"durationNanos"`
	Attributes  map[string]string `json:"attributes,omitempty"`
	Children    []*Node           `json:"children,omitempty"`
}

// related keeps of spans (one trace) those about key, their ancestors and their
// descendants, and builds the tree.
func related(spans []Span, key string) Trace {
	byID := make(map[trace.SpanID]int, len(spans))
	kids := make(map[trace.SpanID][]int)
	for i, sp := range spans {
		byID[sp.SpanID] = i
		kids[sp.Parent] = append(kids[sp.Parent], i)
	}
	keep := make([]bool, len(spans))
	var down func(i int)
	down = func(i int) {
		if keep[i] {
			return
		}
		keep[i] = true
		for _, k := range kids[spans[i].SpanID] {
			down(k)
		}
	}
	for i, sp := range spans {
		if sp.Object == key {
			down(i)
		}
	}
	for _, sp := range spans { // then the ancestors: a span about key may end after its descendants
		if sp.Object != key {
			continue
		}
		for p, ok := byID[sp.Parent]; ok && !keep[p]; p, ok = byID[spans[p].Parent] {
			keep[p] = true
		}
	}
	return tree(spans, keep)
}

// Whole returns the spans of one trace as a tree, all of them.
func Whole(spans []Span) Trace {
	keep := make([]bool, len(spans))
	for i := range keep {
		keep[i] = true
	}
	return tree(spans, keep)
}

// tree builds the tree of the spans (one trace) keep marks.
func tree(spans []Span, keep []bool) Trace {
	var start time.Time
	for i, sp := range spans {
		if keep[i] && (start.IsZero() || sp.Start.Before(start)) {
			start = sp.Start
		}
	}
	nodes := make(map[trace.SpanID]*Node)
	var order []int
	for i := range spans {
		if keep[i] {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return spans[order[a]].Start.Before(spans[order[b]].Start) })
	t := Trace{Start: start}
	for _, i := range order {
		sp := spans[i]
		t.TraceID = sp.TraceID.String()
		n := &Node{SpanID: sp.SpanID.String(), Name: sp.Name, StartOffset: sp.Start.Sub(start),
			Duration: sp.End.Sub(sp.Start)}
		if sp.Parent.IsValid() {
			n.ParentID = sp.Parent.String()
		}
		if len(sp.Attrs) > 0 {
			n.Attributes = make(map[string]string, len(sp.Attrs))
			for _, kv := range sp.Attrs {
				n.Attributes[string(kv.Key)] = kv.Value.Emit()
			}
		}
		nodes[sp.SpanID] = n
	}
	for _, i := range order {
		sp := spans[i]
		n := nodes[sp.SpanID]
		if p, ok := nodes[sp.Parent]; ok && sp.Parent.IsValid() {
			p.Children = append(p.Children, n)
		} else {
			t.Roots = append(t.Roots, n)
		}
	}
	return t
}

// Shutdown does nothing.
func (s *Store) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing: spans are kept as they end.
func (s *Store) ForceFlush(context.Context) error { return nil }
