package actors

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// openReplicated starts a Raft cluster of n in-memory stores in this process and,
// once it has a ready leader, returns the leader or a follower.
func openReplicated(t *testing.T, n int, lead bool) *persistence.Store {
	t.Helper()
	initial := map[string]string{}
	for i := 1; i <= n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		initial[fmt.Sprintf("m%d", i)] = ln.Addr().String()
		_ = ln.Close()
	}
	stores := make([]*persistence.Store, 0, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, addr := range initial {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject,
				Replication: &persistence.Replication{Name: name, PeerAddress: addr, InitialCluster: initial}})
			if err != nil {
				t.Errorf("open %s: %v", name, err)
				return
			}
			mu.Lock()
			stores = append(stores, st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, st := range stores {
			_ = st.Close()
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	var leader *persistence.Store
	poll.UntilTrue(t, 20*time.Second, "a ready leader", func() bool {
		for _, st := range stores {
			if st.IsLeader() && st.Ready() {
				leader = st
				return true
			}
		}
		return false
	})
	if lead {
		return leader
	}
	for _, st := range stores {
		if st != leader {
			return st
		}
	}
	t.Fatal("no follower")
	return nil
}

// findSpan is the first span named name in the forest (depth first), or nil.
func findSpan(ns []*tracing.Node, name string) *tracing.Node {
	for _, n := range ns {
		if n.Name == name {
			return n
		}
		if f := findSpan(n.Children, name); f != nil {
			return f
		}
	}
	return nil
}

func positiveMillis(attrs map[string]string, key string) bool {
	v, err := strconv.ParseFloat(attrs[key], 64)
	return err == nil && v > 0
}

// TestStoreApplySpanCarriesTheStoreTiming: a traced pod create's "store apply"
// span carries where the store's time went: its group and fsync on a store of one;
// on the leader of three its replication, and a "raft replicate" child within it;
// on a follower its forwarding, and a "forward to leader" child within it.
func TestStoreApplySpanCarriesTheStoreTiming(t *testing.T) {
	cases := []struct {
		name       string
		open       func(*testing.T) *persistence.Store
		replicated bool
		forwarded  bool
	}{
		{"store of one", func(t *testing.T) *persistence.Store { return openStore(t) }, false, false},
		{"leader of three", func(t *testing.T) *persistence.Store { return openReplicated(t, 3, true) }, true, false},
		{"follower of three", func(t *testing.T) *persistence.Store { return openReplicated(t, 3, false) }, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := tracing.New(tracing.Options{Sampling: 1})
			if err != nil {
				t.Fatal(err)
			}
			s, err := Start(Options{Store: tc.open(t), Log: quietLog(), RequestTimeout: 10 * time.Second,
				Resources: testResources, Tracer: tr})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Stop)
			ctx, req := tr.Start(context.Background(), "POST pods")
			if _, err := s.Create(ctx, podKey("default", "p"), newPod("default", "p").obj()); err != nil {
				t.Fatal(err)
			}
			req.End()

			var apply *tracing.Node
			waitFor(t, "the pod create's store apply", func() error {
				hist := tr.Store().History("pods/default/p")
				if len(hist) != 1 {
					return fmt.Errorf("%d traces", len(hist))
				}
				create := findSpan(hist[0].Roots, "pods create")
				if create == nil {
					return fmt.Errorf("no pods create in %v", spanNames(hist[0].Roots))
				}
				if apply = findSpan(create.Children, "store apply"); apply == nil {
					return fmt.Errorf("no store apply below pods create: %v", spanNames(hist[0].Roots))
				}
				return nil
			})
			a := apply.Attributes
			if g, err := strconv.Atoi(a["store.group"]); !tc.forwarded && (err != nil || g < 1) {
				t.Errorf("store.group %q, want >= 1", a["store.group"])
			} else if _, ok := a["store.group"]; tc.forwarded && ok { // a follower has no group
				t.Errorf("follower: store.group %q", a["store.group"])
			}
			if _, err := strconv.ParseFloat(a["store.queue_ms"], 64); err != nil {
				t.Errorf("store.queue_ms %q: %v", a["store.queue_ms"], err)
			}
			if !positiveMillis(a, "store.apply_ms") || a["revision"] == "" {
				t.Errorf("attributes %v", a)
			}
			if tc.forwarded {
				fw := findSpan(apply.Children, "forward to leader")
				if a["store.forwarded"] != "true" || !positiveMillis(a, "store.forward_ms") || fw == nil ||
					findSpan(apply.Children, "raft replicate") != nil {
					t.Fatalf("follower: attributes %v, children %v", a, spanNames(apply.Children))
				}
				if fw.StartOffset < apply.StartOffset || fw.StartOffset+fw.Duration > apply.StartOffset+apply.Duration ||
					fw.Duration <= 0 {
					t.Errorf("forward to leader at %v for %v, not within store apply at %v for %v",
						fw.StartOffset, fw.Duration, apply.StartOffset, apply.Duration)
				}
				return
			}
			if _, ok := a["store.forwarded"]; ok {
				t.Errorf("not forwarded: attributes %v", a)
			}
			rep := findSpan(apply.Children, "raft replicate")
			if !tc.replicated {
				if _, ok := a["store.replicate_ms"]; ok || !positiveMillis(a, "store.fsync_ms") || rep != nil {
					t.Errorf("store of one: attributes %v, children %v", a, spanNames(apply.Children))
				}
				return
			}
			if _, ok := a["store.fsync_ms"]; ok || !positiveMillis(a, "store.replicate_ms") {
				t.Errorf("replicated: attributes %v", a)
			}
			if rep == nil {
				t.Fatalf("no raft replicate below store apply: %v", spanNames(apply.Children))
			}
			if rep.StartOffset < apply.StartOffset || rep.StartOffset+rep.Duration > apply.StartOffset+apply.Duration ||
				rep.Duration <= 0 || rep.Attributes["store.group"] != a["store.group"] {
				t.Errorf("raft replicate at %v for %v (%v), not within store apply at %v for %v",
					rep.StartOffset, rep.Duration, rep.Attributes, apply.StartOffset, apply.Duration)
			}
		})
	}
}

// TestStoreStepsOfAForwardedApply: the timing of a follower's forwarded Apply (as
// persistence reports it) puts a "forward to leader" child on the store apply span,
// spanning the round trip, and no replication step of its own.
func TestStoreStepsOfAForwardedApply(t *testing.T) {
	tr, err := tracing.New(tracing.Options{Sampling: 1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, sp := tr.Start(context.Background(), "store apply", trace.WithTimestamp(start.Add(-time.Millisecond)))
	storeSteps(tr, sp, &persistence.ApplyTiming{Start: start, Forwarded: true, Forward: 3 * time.Millisecond, Revision: 7},
		attribute.String("op", "update"), attribute.Int64("revision", 7))
	sp.End(trace.WithTimestamp(start.Add(4 * time.Millisecond)))

	spans := tr.Store().Trace(sp.SpanContext().TraceID())
	var fw *tracing.Span
	for i := range spans {
		switch spans[i].Name {
		case "forward to leader":
			fw = &spans[i]
		case "raft replicate":
			t.Errorf("a replication step on a forwarded apply")
		case "store apply":
			attrs := map[string]string{}
			for _, kv := range spans[i].Attrs {
				attrs[string(kv.Key)] = kv.Value.Emit()
			}
			if attrs["store.forwarded"] != "true" || attrs["store.forward_ms"] != "3" || attrs["revision"] != "7" ||
				attrs["op"] != "update" || attrs["commands"] != "1" {
				t.Errorf("store apply attributes %v", attrs)
			}
		}
	}
	if fw == nil {
		t.Fatalf("no forward to leader span in %d spans", len(spans))
	}
	if fw.Parent != sp.SpanContext().SpanID() || !fw.Start.Equal(start) || !fw.End.Equal(start.Add(3*time.Millisecond)) {
		t.Errorf("forward to leader: parent %v, %v to %v; want below %v, %v to %v", fw.Parent, fw.Start, fw.End,
			sp.SpanContext().SpanID(), start, start.Add(3*time.Millisecond))
	}
}

// BenchmarkStoreSteps: what the store's timing adds to a sampled store apply span
// as an object actor makes it (kept in the in-memory store): the attributes on a
// store of one, and the "raft replicate" child on a leader.
func BenchmarkStoreSteps(b *testing.B) {
	start := time.Now()
	cases := []struct {
		name   string
		timing *persistence.ApplyTiming
	}{
		{"revision only", nil},
		{"store of one", &persistence.ApplyTiming{Start: start, Queued: time.Millisecond, Group: 4, Fsync: time.Millisecond,
			Apply: time.Millisecond, Revision: 1}},
		{"leader", &persistence.ApplyTiming{Start: start, Queued: time.Millisecond, Group: 4, Replicate: time.Millisecond,
			Apply: time.Millisecond, Revision: 1}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			tr, err := tracing.New(tracing.Options{Sampling: 1})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, sp := tr.Start(context.Background(), "store apply")
				storeSteps(tr, sp, tc.timing, attribute.String("op", "create"), attribute.Int64("revision", 1))
				sp.End()
			}
		})
	}
}
