package scheduler

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func TestResourcePriorities(t *testing.T) {
	tests := []struct {
		name            string
		node            *corev1.Node
		existing        []*corev1.Pod
		pod             *corev1.Pod
		least, balanced float64
	}{
		// cpu (4000-1000)*10/4000 = 7.5, mem (8Gi-2Gi)*10/8Gi = 7.5; fractions .25/.25.
		{name: "quarter used", node: st.NewNode("n").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").CPU("500m").Mem("1Gi").Obj()},
			pod:      st.NewPod("p").CPU("500m").Mem("1Gi").Obj(), least: 7.5, balanced: 10},
		// cpu 3000/4000 left → 7.5; mem 7Gi/8Gi → 8.75; mean 8.125. |0.25-0.125| → 10-1.25 = 8.75.
		{name: "unbalanced", node: st.NewNode("n").Obj(),
			pod: st.NewPod("p").CPU("1").Mem("1Gi").Obj(), least: 8.125, balanced: 8.75},
		// no requests: 100m and 200Mi count for priorities. cpu 3900*10/4000 = 9.75,
		// mem (8192-200)*10/8192 = 9.755859375; |0.025-0.0244140625| → 9.994140625.
		{name: "defaults for unset", node: st.NewNode("n").Obj(),
			pod: st.NewPod("p").Obj(), least: 9.7529296875, balanced: 9.994140625},
		{name: "explicit zero stays zero", node: st.NewNode("n").Obj(),
			pod: st.NewPod("p").CPU("0").Mem("0").Obj(), least: 10, balanced: 10},
		{name: "over capacity", node: st.NewNode("n").CPU("1").Obj(),
			pod: st.NewPod("p").CPU("2").Mem("1Gi").Obj(), least: 4.375, balanced: 0},
		{name: "no capacity reported", node: st.NewNode("n").CPU("").Mem("").Obj(),
			pod: st.NewPod("p").CPU("1").Obj(), least: 0, balanced: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := nodeWith(tc.node, tc.existing...)
			ctx := NewPodContext(tc.pod)
			if got := (LeastRequestedPriority{}).Score(tc.pod, n, ctx); got != tc.least {
				t.Errorf("LeastRequested = %g, want %g", got, tc.least)
			}
			if got := (BalancedResourceAllocation{}).Score(tc.pod, n, ctx); got != tc.balanced {
				t.Errorf("BalancedResourceAllocation = %g, want %g", got, tc.balanced)
			}
		})
	}
}

func TestLabelPriorities(t *testing.T) {
	labelled := NewNodeInfo(st.NewNode("n").Labels("zone", "a").Obj())
	bare := NewNodeInfo(st.NewNode("m").Obj())
	pod := st.NewPod("p").Obj()
	ctx := NewPodContext(pod)
	tests := []struct {
		name string
		p    Priority
		n    *NodeInfo
		want float64
	}{
		{"prefer present/has", NodeLabelPriority{Label: "zone", Presence: true}, labelled, 10},
		{"prefer present/lacks", NodeLabelPriority{Label: "zone", Presence: true}, bare, 0},
		{"prefer absent/has", NodeLabelPriority{Label: "zone", Presence: false}, labelled, 0},
		{"prefer absent/lacks", NodeLabelPriority{Label: "zone", Presence: false}, bare, 10},
		{"equal", EqualPriority{}, bare, 1},
		{"spreading without service", ServiceSpreadingPriority{}, bare, 10},
		{"selector spreading without group", SelectorSpreadPriority{}, bare, 10},
		{"anti-affinity without service/labelled", ServiceAntiAffinity{Label: "zone"}, labelled, 10},
		{"anti-affinity/unlabelled", ServiceAntiAffinity{Label: "zone"}, bare, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Score(pod, tc.n, ctx); got != tc.want {
				t.Fatalf("%s = %g, want %g", tc.p.Name(), got, tc.want)
			}
		})
	}
}

// TestServicePriorities places pods of service "web" and checks the spreading and
// anti-affinity scores, which need counts over all nodes (Cache.Context).
func TestServicePriorities(t *testing.T) {
	c := NewCache()
	c.SetNode(st.NewNode("a1").Labels("zone", "a").Obj())
	c.SetNode(st.NewNode("a2").Labels("zone", "a").Obj())
	c.SetNode(st.NewNode("b1").Labels("zone", "b").Obj())
	c.SetNode(st.NewNode("x").Obj())
	c.SetService(st.NewService("web", "app", "web"))
	for i, node := range []string{"a1", "a1", "a1", "a2", "b1", "x"} {
		c.SetPod(st.NewPod("web-"+string(rune('0'+i))).Labels("app", "web").Node(node).Obj())
	}
	c.SetPod(st.NewPod("other").Labels("app", "db").Node("b1").Obj())
	c.SetPod(st.NewPod("web-ns").Namespace("other").Labels("app", "web").Node("b1").Obj())

	pod := st.NewPod("web-new").Labels("app", "web").Obj()
	anti := ServiceAntiAffinity{Label: "zone"}
	policy := Policy{Priorities: []WeightedPriority{{Name: "ZoneSpread", Weight: 1, Priority: anti}}}
	ctx := c.Context(pod, &policy)
	if ctx.Service != "default/web" || ctx.ServicePods != 6 || ctx.MaxPerNode != 3 {
		t.Fatalf("context = %q %d pods, max %d; want default/web 6 pods, max 3", ctx.Service, ctx.ServicePods, ctx.MaxPerNode)
	}
	tests := []struct {
		node            string
		spread, antiAff float64
	}{
		{"a1", 0, 10.0 / 3},        // 10*(3-3)/3; zone a holds 4 of 6: 10*2/6
		{"a2", 20.0 / 3, 10.0 / 3}, // 10*(3-1)/3
		{"b1", 20.0 / 3, 50.0 / 6}, // zone b holds 1: 10*5/6
		{"x", 20.0 / 3, 0},         // unlabelled
	}
	for _, tc := range tests {
		t.Run(tc.node, func(t *testing.T) {
			n := c.Node(tc.node)
			if got := (ServiceSpreadingPriority{}).Score(pod, n, ctx); math.Abs(got-tc.spread) > 1e-9 {
				t.Errorf("spreading = %g, want %g", got, tc.spread)
			}
			if got := (SelectorSpreadPriority{}).Score(pod, n, ctx); math.Abs(got-tc.spread) > 1e-9 {
				t.Errorf("selector spreading = %g, want %g (the service is the only selector)", got, tc.spread)
			}
			if got := anti.Score(pod, n, ctx); math.Abs(got-tc.antiAff) > 1e-9 {
				t.Errorf("anti-affinity = %g, want %g", got, tc.antiAff)
			}
		})
	}
}

// TestSelectorSpread: the spread group of a pod is every pod that any service or
// replication controller selecting it selects, in its namespace; RC pods without a
// service are spread too, and a status write to an RC (same selector) changes
// nothing.
func TestSelectorSpread(t *testing.T) {
	rc := st.NewRC
	c := NewCache()
	for _, n := range []string{"n1", "n2", "n3"} {
		c.SetNode(st.NewNode(n).Obj())
	}
	c.SetController(rc("web", "app", "web", "tier", "front"))
	c.SetService(st.NewService("front", "tier", "front"))
	c.SetController(rc("batch", "app", "batch"))
	place := func(name, node string, labels ...string) {
		c.SetPod(st.NewPod(name).Labels(labels...).Node(node).Obj())
	}
	place("w1", "n1", "app", "web", "tier", "front")
	place("w2", "n1", "app", "web", "tier", "front")
	place("cache", "n2", "app", "cache", "tier", "front") // the service's, not the RC's
	place("b1", "n3", "app", "batch")
	place("b2", "n3", "app", "batch")
	place("b3", "n3", "app", "batch")
	place("other-ns", "n2", "app", "batch")
	c.SetPod(st.NewPod("ns").Namespace("other").Labels("app", "batch").Node("n2").Obj())

	policy := DefaultPolicy()
	tests := []struct {
		name      string
		pod       *corev1.Pod
		group     string
		total     int
		max       int
		perNode   map[string]int
		scoreOnN2 float64
	}{
		{"RC and service: the union", st.NewPod("w").Labels("app", "web", "tier", "front").Obj(),
			"default/front|default/replicationcontrollers/web", 3, 2, map[string]int{"n1": 2, "n2": 1, "n3": 0}, 5},
		{"RC only", st.NewPod("b").Labels("app", "batch").Obj(),
			"default/replicationcontrollers/batch", 4, 3, map[string]int{"n1": 0, "n2": 1, "n3": 3}, 20.0 / 3},
		{"no group", st.NewPod("lone").Labels("app", "lone").Obj(), "", 0, 0, map[string]int{"n1": 0, "n2": 0, "n3": 0}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := c.Context(tc.pod, &policy)
			if ctx.Spread != tc.group || ctx.SpreadPods != tc.total || ctx.SpreadMax != tc.max {
				t.Fatalf("group %q, %d pods, max %d; want %q, %d, %d", ctx.Spread, ctx.SpreadPods, ctx.SpreadMax, tc.group, tc.total, tc.max)
			}
			for n, want := range tc.perNode {
				if got := ctx.SpreadPodsOn(c.Node(n)); got != want {
					t.Errorf("%s holds %d of the group, want %d", n, got, want)
				}
			}
			if got := (SelectorSpreadPriority{}).Score(tc.pod, c.Node("n2"), ctx); math.Abs(got-tc.scoreOnN2) > 1e-9 {
				t.Errorf("score on n2 = %g, want %g", got, tc.scoreOnN2)
			}
		})
	}

	// Counts follow pods coming and going, in the group entries too.
	c.SetPod(st.NewPod("w3").Labels("app", "web", "tier", "front").Node("n2").Obj())
	c.DeletePod("default/w1")
	ctx := c.Context(st.NewPod("w").Labels("app", "web", "tier", "front").Obj(), &policy)
	if ctx.SpreadPods != 3 || ctx.SpreadPodsOn(c.Node("n2")) != 2 || ctx.SpreadMax != 2 {
		t.Fatalf("after moves: %d pods, %d on n2, max %d; want 3, 2, 2", ctx.SpreadPods, ctx.SpreadPodsOn(c.Node("n2")), ctx.SpreadMax)
	}
	gen := c.svcGen
	c.SetController(rc("batch", "app", "batch")) // a status write: same selector
	if c.svcGen != gen {
		t.Fatal("an RC update with the same selector made the classes stale")
	}
	c.RemoveController("default", "batch")
	if ctx := c.Context(st.NewPod("b").Labels("app", "batch").Obj(), &policy); ctx.Spread != "" {
		t.Fatalf("group %q after the RC went", ctx.Spread)
	}
}
