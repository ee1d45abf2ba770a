package actors

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
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
