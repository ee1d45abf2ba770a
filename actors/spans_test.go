package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
	"github.com/kubeactor/kubeactor/tracing"
)

// TestSpansOfAPodsStory: an RC of 2 replicas created under a request's span, its
// pods scheduled on a node: one pod's history is one trace holding the request, the
// RC's create and sync, the pod's create, the scheduling round and the binding, each
// the ancestor of the next and starting no earlier.
func TestSpansOfAPodsStory(t *testing.T) {
	store := openStore(t)
	tr, err := tracing.New(tracing.Options{Sampling: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{Store: store, Log: quietLog(), RequestTimeout: 10 * time.Second, Resources: testResources,
		Scheduler: true, SchedulerShards: 2, SchedulerSeed: 1, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	create(t, s, st.NewNode("n1").CPU("4").Obj())
	ctx, req := tr.Start(context.Background(), "POST replicationcontrollers")
	if _, err := s.Create(ctx, rcKey("default", "web"), newRC("default", "web", 2)); err != nil {
		t.Fatal(err)
	}
	req.End()
	var pod string
	waitFor(t, "2 pods bound", func() error {
		owned, _ := rcPods(store, "default", "web")
		bound := 0
		for _, p := range owned {
			if p.Spec.NodeName == "n1" {
				bound++
				pod = p.Name
			}
		}
		if bound != 2 {
			return fmt.Errorf("%d of %d bound", bound, len(owned))
		}
		return nil
	})
	want := []string{"POST replicationcontrollers", "replicationcontrollers create", "replicationcontrollers sync",
		"pods create", "scheduler round", "pods binding"}
	var chain []*tracing.Node
	waitFor(t, "the pod's story in one trace", func() error {
		hist := tr.Store().History("pods/default/" + pod)
		if len(hist) != 1 {
			return fmt.Errorf("%d traces", len(hist))
		}
		chain = nil
		n := hist[0].Roots
		for _, name := range want {
			var found *tracing.Node
			var walk func([]*tracing.Node)
			walk = func(ns []*tracing.Node) {
				for _, c := range ns {
					if found == nil && c.Name == name &&
						(!strings.HasPrefix(name, "pods") || c.Attributes[string(tracing.ObjectKey)] == "pods/default/"+pod) {
						found = c
						return
					}
				}
				for _, c := range ns {
					if found == nil {
						walk(c.Children)
					}
				}
			}
			walk(n)
			if found == nil {
				return fmt.Errorf("no span %q below %v", name, spanNames(n))
			}
			chain = append(chain, found)
			n = found.Children
		}
		return nil
	})
	for i := 1; i < len(chain); i++ {
		if chain[i].StartOffset < chain[i-1].StartOffset {
			t.Errorf("%s starts at %v, before its cause %s at %v", chain[i].Name, chain[i].StartOffset,
				chain[i-1].Name, chain[i-1].StartOffset)
		}
	}
	round := chain[4]
	if round.Attributes["node"] != "n1" || round.Attributes["result"] != "bound" || round.Attributes["candidates"] != "1" {
		t.Errorf("round attributes %v", round.Attributes)
	}
	// The round's bid time of each of the 2 shards (no timing asserted: only that
	// both shards' times are there).
	if bids := strings.Split(strings.Trim(round.Attributes["shard.bid_ms"], "[]"), ","); len(bids) != 2 {
		t.Errorf("round's shard.bid_ms %q: want one time per shard (2)", round.Attributes["shard.bid_ms"])
	}
	if chain[2].Attributes["decided.creates"] != "2" {
		t.Errorf("sync attributes %v", chain[2].Attributes)
	}
	if chain[3].Attributes["mailbox.wait"] == "" {
		t.Errorf("pod create attributes %v", chain[3].Attributes)
	}
}

func spanNames(ns []*tracing.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
		for _, c := range spanNames(n.Children) {
			out = append(out, n.Name+" > "+c)
		}
	}
	return out
}

// TestSpansOfAnRCsDecisions: an RC's sync spans say what each sync decided: the
// orphans it adopted when created over them, the pod it released when that pod's
// labels stopped matching, and the pod it created to replace it.
func TestSpansOfAnRCsDecisions(t *testing.T) {
	store := openStore(t)
	tr, err := tracing.New(tracing.Options{Sampling: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{Store: store, Log: quietLog(), RequestTimeout: 10 * time.Second, Resources: testResources,
		SyncPacing: -1, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	ctx, req := tr.Start(context.Background(), "test")
	defer req.End()
	for i := 0; i < 2; i++ {
		p := newPod("default", fmt.Sprintf("orphan-%d", i)).obj()
		p.Labels = map[string]string{"app": "web"}
		if _, err := s.Create(ctx, podKey("default", p.Name), p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, rcKey("default", "web"), newRC("default", "web", 2)); err != nil {
		t.Fatal(err)
	}
	// decided returns the sum of attr over the RC's sync spans. A sync that runs
	// before the adoption it asked for is stored asks for it again, so adoptions
	// and releases are counted at least once per pod.
	decided := func(attr string) int64 {
		var n int64
		for _, sp := range tr.Store().Object("replicationcontrollers/default/web") {
			for _, kv := range sp.Attrs {
				if sp.Name == "replicationcontrollers sync" && string(kv.Key) == attr {
					n += kv.Value.AsInt64()
				}
			}
		}
		return n
	}
	waitFor(t, "the 2 orphans adopted, in a sync's span", func() error {
		if owned, _ := rcPods(store, "default", "web"); len(owned) != 2 {
			return fmt.Errorf("%d owned", len(owned))
		}
		if n := decided("decided.adopted"); n < 2 {
			return fmt.Errorf("decided.adopted %d", n)
		}
		return nil
	})
	it, err := store.Get(persistence.Key{Resource: "pods", Namespace: "default", Name: "orphan-0"})
	if err != nil {
		t.Fatal(err)
	}
	next := it.Object().(*corev1.Pod).DeepCopy()
	next.Labels = map[string]string{"app": "debug"}
	if _, err := s.Update(ctx, podKey("default", "orphan-0"), next, command.Preconditions{ResourceVersion: it.Revision}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "orphan-0 released and replaced, in the syncs' spans", func() error {
		if n := decided("decided.released"); n < 1 {
			return fmt.Errorf("decided.released %d", n)
		}
		if n := decided("decided.creates"); n != 1 {
			return fmt.Errorf("decided.creates %d", n)
		}
		return nil
	})
	if n := decided("decided.deletes"); n != 0 {
		t.Errorf("decided.deletes %d, want none", n)
	}
}

// TestSpansOfHeartbeats: a node's heartbeat is traced as every write is (the request,
// the node's handling of it, its store apply); the node controller's sync after it,
// which decides nothing, leaves no span. A sync that acts (the heartbeats stopped:
// Ready turns Unknown) has its span, in the trace of the node's last request, the
// parent of its write.
func TestSpansOfHeartbeats(t *testing.T) {
	clock := newFakeClock()
	st := openControllerStore(t)
	tr, err := tracing.New(tracing.Options{Sampling: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Clock: clock, Nodes: testNodeOptions(),
		Resources: append(append([]string(nil), testResources...), "endpoints"), SyncPacing: -1, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	now := clock.Now()
	if _, err := s.Create(context.Background(), nodeKey("n1"), newNode("n1", now, &now)); err != nil {
		t.Fatalf("create node: %v", err)
	}
	forceSync(t, s, nodeKey("n1"))

	clock.Advance(10 * time.Second)
	ctx, req := tr.Start(context.Background(), "PUT nodes/status")
	n := getNode(t, st, "n1").DeepCopy()
	n.Status.Conditions = []corev1.NodeCondition{readyCondition(clock.Now(), now)}
	if _, err := s.Update(WithSubresource(ctx, "status"), nodeKey("n1"), n, command.Preconditions{}); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	req.End()
	forceSync(t, s, nodeKey("n1")) // the heartbeat's sync, and one more, have run
	names := func() []string {
		var out []string
		for _, sp := range tr.Store().Trace(req.SpanContext().TraceID()) {
			out = append(out, sp.Name)
		}
		slices.Sort(out)
		return out
	}
	if got, want := strings.Join(names(), ", "), "PUT nodes/status, nodes status, store apply"; got != want {
		t.Fatalf("the heartbeat's trace: %s; want %s", got, want)
	}

	clock.Advance(time.Minute) // no heartbeat for longer than the grace period
	forceSync(t, s, nodeKey("n1"))
	if got := readyStatus(getNode(t, st, "n1")); got != corev1.ConditionUnknown {
		t.Fatalf("Ready = %q, want Unknown", got)
	}
	spans := tr.Store().Trace(req.SpanContext().TraceID())
	var sync *tracing.Span
	for i := range spans {
		if spans[i].Name == "nodes sync" {
			sync = &spans[i]
		}
	}
	if sync == nil {
		t.Fatalf("no span of the sync that wrote Unknown in %v", names())
	}
	applies := 0
	for _, sp := range spans {
		if sp.Name == "store apply" && sp.Parent == sync.SpanID {
			applies++
		}
	}
	if applies != 1 {
		t.Errorf("the sync's span has %d store applies below it, want 1 (%v)", applies, names())
	}
}
