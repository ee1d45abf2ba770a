package tracing

import (
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Histories of several processes (docs/replication.md, tracing): each master replica
// keeps its own spans, so the traces path merges the histories the replicas answer.
// SpansOf turns a history back into spans; Dedupe drops the spans two processes both
// answered; BuildHistory builds the history of an object from any span slice, as
// Store.History does from the store.

// SpansOf returns the spans of the traces ts (the inverse of the tree a history
// holds): the start is the trace's start plus the node's offset; attributes come
// back as strings (as the history prints them).
func SpansOf(ts []Trace) []Span {
	var out []Span
	for _, t := range ts {
		tid, err := trace.TraceIDFromHex(t.TraceID)
		if err != nil {
			continue
		}
		var walk func(ns []*Node)
		walk = func(ns []*Node) {
			for _, n := range ns {
				if sid, err := trace.SpanIDFromHex(n.SpanID); err == nil {
					sp := Span{TraceID: tid, SpanID: sid, Name: n.Name, Start: t.Start.Add(n.StartOffset)}
					sp.End = sp.Start.Add(n.Duration)
					if p, err := trace.SpanIDFromHex(n.ParentID); err == nil {
						sp.Parent = p
					}
					keys := make([]string, 0, len(n.Attributes))
					for k := range n.Attributes {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						sp.Attrs = append(sp.Attrs, attribute.String(k, n.Attributes[k]))
						if attribute.Key(k) == ObjectKey {
							sp.Object = n.Attributes[k]
						}
					}
					out = append(out, sp)
				}
				walk(n.Children)
			}
		}
		walk(t.Roots)
	}
	return out
}

// Dedupe returns spans without the repeats of a (trace id, span id), keeping the
// first of each, in order.
func Dedupe(spans []Span) []Span {
	type id struct {
		t trace.TraceID
		s trace.SpanID
	}
	seen := make(map[id]bool, len(spans))
	out := spans[:0:0]
	for _, sp := range spans {
		k := id{sp.TraceID, sp.SpanID}
		if !seen[k] {
			seen[k] = true
			out = append(out, sp)
		}
	}
	return out
}

// BuildHistory returns the story of the object key told by spans (of any traces, in
// any order, without repeats): for each trace that has a span about key, those
// spans, their ancestors and their descendants, as trees (as Store.History); the
// traces in the order of their first span about key, the most recent last.
func BuildHistory(spans []Span, key string) []Trace {
	byTrace := map[trace.TraceID][]Span{}
	first := map[trace.TraceID]time.Time{}
	for _, sp := range spans {
		byTrace[sp.TraceID] = append(byTrace[sp.TraceID], sp)
		if sp.Object == key {
			if t, ok := first[sp.TraceID]; !ok || sp.Start.Before(t) {
				first[sp.TraceID] = sp.Start
			}
		}
	}
	order := make([]trace.TraceID, 0, len(first))
	for id := range first {
		order = append(order, id)
	}
	sort.Slice(order, func(a, b int) bool {
		ta, tb := first[order[a]], first[order[b]]
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return order[a].String() < order[b].String()
	})
	out := make([]Trace, 0, len(order))
	for _, id := range order {
		out = append(out, related(byTrace[id], key))
	}
	return out
}
