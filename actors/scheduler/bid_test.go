package scheduler

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func first(int) int  { return 0 }
func last(n int) int { return n - 1 }

func TestDecide(t *testing.T) {
	fit := func(node string, score float64) Bid { return Bid{Node: node, Fits: true, Score: score} }
	no := func(node, reason string) Bid { return Bid{Node: node, Reason: reason} }
	tests := []struct {
		name     string
		bids     []Bid
		tieBreak func(int) int
		node     string
		ties     int
		message  string
	}{
		{name: "no nodes", message: "no nodes available to schedule pods"},
		{name: "highest wins", bids: []Bid{fit("a", 3), fit("b", 7), fit("c", 5)}, tieBreak: first, node: "b", ties: 1},
		{name: "tie first", bids: []Bid{fit("a", 7), fit("b", 7), fit("c", 5), fit("d", 7)}, tieBreak: first, node: "a", ties: 3},
		{name: "tie last", bids: []Bid{fit("a", 7), fit("b", 7), fit("c", 5), fit("d", 7)}, tieBreak: last, node: "d", ties: 3},
		{name: "out of range tie-break wraps", bids: []Bid{fit("a", 1), fit("b", 1)}, tieBreak: func(int) int { return -1 }, node: "b", ties: 2},
		{name: "zero scores still win", bids: []Bid{no("a", ReasonInsufficientCPU), fit("b", 0)}, tieBreak: first, node: "b", ties: 1},
		{name: "none fit", bids: []Bid{no("a", ReasonInsufficientCPU), no("b", ReasonNodeSelector), no("c", ReasonInsufficientCPU)},
			message: "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) didn't match node selector."},
		{name: "equal counts by reason", bids: []Bid{no("a", ReasonUnschedulable), no("b", ReasonNotReady)},
			message: "0/2 nodes are available: 1 node(s) were not ready, 1 node(s) were unschedulable."},
	}
	pod := st.NewPod("web").Obj()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(pod, tc.bids, tc.tieBreak)
			if d.Node != tc.node || d.Ties != tc.ties || d.Pod != "default/web" {
				t.Fatalf("Decide = %q (%d ties) for %q, want %q (%d ties)", d.Node, d.Ties, d.Pod, tc.node, tc.ties)
			}
			if tc.message != "" {
				if got := FailedSchedulingMessage(d); got != tc.message {
					t.Fatalf("message = %q, want %q", got, tc.message)
				}
			}
		})
	}
}

func TestDecideTop(t *testing.T) {
	var bids []Bid
	for i, s := range []float64{5, 9, 1, 9, 7, 3, 8, 2} {
		bids = append(bids, Bid{Node: fmt.Sprintf("n%d", i), Fits: true, Score: s})
	}
	d := Decide(st.NewPod("p").Obj(), bids, first)
	var got []string
	for _, b := range d.Top {
		got = append(got, fmt.Sprintf("%s:%g", b.Node, b.Score))
	}
	want := []string{"n1:9", "n3:9", "n6:8", "n4:7", "n0:5"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Top = %v, want %v", got, want)
	}
	if msg := ScheduledMessage(d); msg != "Successfully assigned p to n1" {
		t.Fatalf("ScheduledMessage = %q", msg)
	}
}

// TestMergeProperty: deciding per shard and merging gives the same account as
// deciding over all nodes, and each of the tied best nodes wins about equally often.
func TestMergeProperty(t *testing.T) {
	pod := st.NewPod("p").Obj()
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		bids := make([]Bid, 1+r.Intn(40))
		for i := range bids {
			bids[i] = Bid{Node: fmt.Sprintf("n%02d", i), Fits: r.Intn(3) > 0, Score: float64(r.Intn(4))}
			if !bids[i].Fits {
				bids[i].Reason, bids[i].Score = []string{ReasonInsufficientCPU, ReasonHostPorts}[r.Intn(2)], 0
			}
		}
		whole := Decide(pod, bids, first)
		var merged Decision
		for lo := 0; lo < len(bids); {
			hi := min(len(bids), lo+1+r.Intn(8))
			merged = Merge(merged, Decide(pod, bids[lo:hi], r.Intn), r.Intn)
			lo = hi
		}
		if merged.Score != whole.Score || merged.Ties != whole.Ties || merged.Nodes != whole.Nodes ||
			merged.Feasible != whole.Feasible || !reflect.DeepEqual(merged.Reasons, whole.Reasons) ||
			!reflect.DeepEqual(merged.Top, whole.Top) || merged.Pod != whole.Pod {
			t.Fatalf("seed %d: merged %+v, whole %+v", seed, merged, whole)
		}
		if whole.Ties > 0 {
			var b *Bid
			for i := range bids {
				if bids[i].Node == merged.Node {
					b = &bids[i]
				}
			}
			if b == nil || !b.Fits || b.Score != whole.Score {
				t.Fatalf("seed %d: merged winner %q is not among the best", seed, merged.Node)
			}
		}
	}

	// Uniformity: 4 tied nodes over 3 shards of sizes 1, 2, 1.
	bids := []Bid{{Node: "a", Fits: true, Score: 5}, {Node: "b", Fits: true, Score: 5}, {Node: "c", Fits: true, Score: 5}, {Node: "d", Fits: true, Score: 5}}
	r := rand.New(rand.NewSource(7))
	wins := map[string]int{}
	const rounds = 8000
	for i := 0; i < rounds; i++ {
		d := Merge(Merge(Decide(pod, bids[:1], r.Intn), Decide(pod, bids[1:3], r.Intn), r.Intn), Decide(pod, bids[3:], r.Intn), r.Intn)
		wins[d.Node]++
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		if w := wins[n]; w < rounds/4-300 || w > rounds/4+300 {
			t.Errorf("node %s won %d of %d rounds; want about %d", n, w, rounds, rounds/4)
		}
	}
}

func TestBidExplain(t *testing.T) {
	c := NewCache()
	c.SetNode(st.NewNode("n1").Obj())
	c.SetNode(st.NewNode("n2").Unschedulable().Obj())
	c.SetNode(st.NewNode("n3").NotReady().Obj())
	policy := DefaultPolicy()
	pod := st.NewPod("p").CPU("1").Mem("2Gi").Obj()
	d := c.Schedule(pod, &policy, first)
	// cpu (4000-1000)*10/4000 = 7.5, memory (8Gi-2Gi)*10/8Gi = 7.5: no longer truncated to 7.
	want := Decision{Pod: "default/p", Node: "n1", Score: 27.5, Ties: 1, Nodes: 3, Feasible: 1,
		Reasons: map[string]int{ReasonNotReady: 1, ReasonUnschedulable: 1},
		Top: []Bid{{Node: "n1", Fits: true, Score: 27.5, Scores: []PriorityScore{
			{Name: "LeastRequestedPriority", Weight: 1, Score: 7.5},
			{Name: "BalancedResourceAllocation", Weight: 1, Score: 10},
			{Name: "SelectorSpreadPriority", Weight: 1, Score: 10},
		}}}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("Schedule =\n%+v\nwant\n%+v", d, want)
	}
	empty := Policy{}
	if b := empty.Explain(pod, c.Node("n1"), NewPodContext(pod)); b.Score != 1 || len(b.Scores) != 1 || b.Scores[0].Name != "EqualPriority" {
		t.Fatalf("policy without priorities: %+v, want EqualPriority 1", b)
	}
}

// TestTieBreak: the same pod draws the same numbers; pods spread uniformly over the
// choices; salts (shards) draw differently.
func TestTieBreak(t *testing.T) {
	a, b := TieBreak("default/web-1", 1), TieBreak("default/web-1", 1)
	for i := 0; i < 10; i++ {
		if x, y := a(7), b(7); x != y {
			t.Fatalf("draw %d: %d and %d for the same pod", i, x, y)
		}
	}
	const pods, choices = 20000, 10
	hits := make([]int, choices)
	salted := 0
	for i := 0; i < pods; i++ {
		key := fmt.Sprintf("default/web-%d", i)
		k := TieBreak(key, 0)(choices)
		if k < 0 || k >= choices {
			t.Fatalf("%d out of range", k)
		}
		hits[k]++
		if TieBreak(key, 1)(choices) != k {
			salted++
		}
	}
	for k, n := range hits {
		if n < pods/choices-400 || n > pods/choices+400 {
			t.Errorf("choice %d drawn %d times of %d; want about %d", k, n, pods, pods/choices)
		}
	}
	if salted < pods*8/10 {
		t.Errorf("another salt changed only %d of %d draws", salted, pods)
	}
}
