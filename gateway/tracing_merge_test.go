package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kubeactor/kubeactor/tracing"
)

// TestMergeHistories: the replicas' local answers merge into one history: a span two
// replicas both answer appears once; a trace split over replicas (an RC's sync on its
// owner, the pod create it caused on the leader) is one tree; a replica that did not
// answer is named in Partial and the others' spans are still there.
func TestMergeHistories(t *testing.T) {
	t0 := time.Unix(2000, 0)
	const rc = "replicationcontrollers/default/web"
	span := func(tr, id, parent byte, name, obj string) tracing.Span {
		sp := tracing.Span{TraceID: trace.TraceID{tr}, SpanID: trace.SpanID{id}, Name: name, Object: obj,
			Start: t0.Add(time.Duration(id) * time.Millisecond), End: t0.Add(time.Duration(id+1) * time.Millisecond)}
		if parent != 0 {
			sp.Parent = trace.SpanID{parent}
		}
		if obj != "" {
			sp.Attrs = append(sp.Attrs, tracing.ObjectKey.String(obj))
		}
		return sp
	}
	post := span(1, 1, 0, "POST replicationcontrollers", "")
	create := span(1, 2, 1, "replicationcontrollers create", rc)
	sync := span(1, 3, 2, "replicationcontrollers sync", rc)
	podCreate := span(1, 4, 3, "pods create", "pods/default/web-1")
	binding := span(1, 5, 4, "pods binding", "pods/default/web-1")
	other := span(2, 9, 0, "pods create", "pods/default/other")
	later := span(3, 7, 0, "replicationcontrollers sync", rc)

	// answer is what a replica holding spans answers the second round: its history of
	// rc and the whole traces ids.
	answer := func(ids []byte, spans ...tracing.Span) *TraceHistory {
		st := tracing.NewStore(64)
		for _, sp := range spans {
			st.Add(sp)
		}
		h := &TraceHistory{Object: rc, Traces: st.History(rc)}
		for _, id := range ids {
			if sps := st.Trace(trace.TraceID{id}); len(sps) > 0 {
				h.Traces = append(h.Traces, tracing.Whole(sps))
			}
		}
		return h
	}
	tests := []struct {
		name        string
		parts       []memberHistory
		want        []string // per trace, the spans depth-first as name@parent-name
		wantPartial []string
	}{
		{name: "one replica holds all",
			parts: []memberHistory{{name: "m1", h: answer(nil, post, create, sync, podCreate, other)}},
			want:  []string{"POST replicationcontrollers>replicationcontrollers create>replicationcontrollers sync>pods create"}},
		{name: "duplicates removed",
			parts: []memberHistory{
				{name: "m1", h: answer([]byte{1}, post, create, sync)},
				{name: "m2", h: answer([]byte{1}, post, create, sync)},
				{name: "m3", h: answer([]byte{1}, post, create)},
			},
			want: []string{"POST replicationcontrollers>replicationcontrollers create>replicationcontrollers sync"}},
		{name: "a trace over three replicas is one tree",
			parts: []memberHistory{
				{name: "m1", h: answer([]byte{1, 3}, post)},                              // the request came in here
				{name: "m2", h: answer([]byte{1, 3}, create, podCreate, binding, other)}, // the leader
				{name: "m3", h: answer([]byte{1, 3}, sync, later)},                       // the RC's owner
			},
			want: []string{
				"POST replicationcontrollers>replicationcontrollers create>replicationcontrollers sync>pods create>pods binding",
				"replicationcontrollers sync"}},
		{name: "a member down is partial",
			parts: []memberHistory{
				{name: "m1", h: answer([]byte{1}, post, create)},
				{name: "m3", err: errors.New("dial tcp: connection refused")},
				{name: "m2", h: &TraceHistory{Object: rc, Partial: []string{"m3"}}},
			},
			want: []string{"POST replicationcontrollers>replicationcontrollers create"}, wantPartial: []string{"m3"}},
		{name: "nothing kept anywhere",
			parts: []memberHistory{{name: "m1", h: answer(nil, other)}, {name: "m2", h: &TraceHistory{Object: rc}}},
			want:  nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeHistories(rc, tc.parts)
			if got.Object != rc || got.Traces == nil {
				t.Fatalf("object %q, traces %v", got.Object, got.Traces)
			}
			var trees []string
			for _, tr := range got.Traces {
				trees = append(trees, chain(tr.Roots))
			}
			if fmt.Sprint(trees) != fmt.Sprint(tc.want) {
				t.Errorf("traces %q, want %q", trees, tc.want)
			}
			if fmt.Sprint(got.Partial) != fmt.Sprint(tc.wantPartial) {
				t.Errorf("partial %v, want %v", got.Partial, tc.wantPartial)
			}
		})
	}
}

// chain prints a forest as name>child>grandchild, siblings separated by "|" (a span
// kept twice would show twice).
func chain(ns []*tracing.Node) string {
	var parts []string
	for _, n := range ns {
		s := n.Name
		if len(n.Children) > 0 {
			s += ">" + chain(n.Children)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "|")
}

// TestTracesWholeTracesPeerOnly: ?traces=ID (the second round of the fan-out) answers
// the whole traces only to another replica, on the peer port; on the API port the
// path answers the object's history, without spans about other objects.
func TestTracesWholeTracesPeerOnly(t *testing.T) {
	tr, err := tracing.New(tracing.Options{Sampling: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{tracer: tr})
	peer := httptest.NewServer(h.server.PeerHandler())
	t.Cleanup(peer.Close)
	t0 := time.Unix(4000, 0)
	id := trace.TraceID{0xab, 1}
	for i, obj := range []string{"pods/default/a", "pods/default/b"} {
		tr.Store().Add(tracing.Span{TraceID: id, SpanID: trace.SpanID{byte(i + 1)}, Name: "pods create", Object: obj,
			Attrs: []attribute.KeyValue{tracing.ObjectKey.String(obj)}, Start: t0, End: t0.Add(time.Millisecond)})
	}
	uri := TracesPath + "/pods/default/a?local=true&traces=" + id.String()
	tests := []struct {
		name string
		url  string
		want []string
	}{
		{name: "API port: the object's history", url: h.http.URL + uri, want: []string{"pods/default/a"}},
		{name: "peer port: and the whole trace", url: peer.URL + uri, want: []string{"pods/default/a", "pods/default/a", "pods/default/b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got TraceHistory
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %v", resp.StatusCode, err)
			}
			var objs []string
			for _, sp := range tracing.SpansOf(got.Traces) {
				objs = append(objs, sp.Object)
			}
			sort.Strings(objs)
			if fmt.Sprint(objs) != fmt.Sprint(tc.want) {
				t.Errorf("spans about %v, want %v", objs, tc.want)
			}
		})
	}
}
