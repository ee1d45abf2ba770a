package scheduler

import (
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
		least, balanced int64
	}{
		// cpu (4000-1000)*10/4000 = 7, mem (8Gi-2Gi)*10/8Gi = 7; fractions .25/.25.
		{name: "quarter used", node: st.NewNode("n").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").CPU("500m").Mem("1Gi").Obj()},
			pod:      st.NewPod("p").CPU("500m").Mem("1Gi").Obj(), least: 7, balanced: 10},
		// cpu 3000/4000 left → 7; mem 7Gi/8Gi → 8; mean 7. |0.25-0.125| → 10-1.25 = 8.
		{name: "unbalanced", node: st.NewNode("n").Obj(),
			pod: st.NewPod("p").CPU("1").Mem("1Gi").Obj(), least: 7, balanced: 8},
		// no requests: 100m and 200Mi count for priorities. cpu 3900*10/4000=9, mem (8192-200)*10/8192=9.
		{name: "defaults for unset", node: st.NewNode("n").Obj(),
			pod: st.NewPod("p").Obj(), least: 9, balanced: 9},
		{name: "explicit zero stays zero", node: st.NewNode("n").Obj(),
			pod: st.NewPod("p").CPU("0").Mem("0").Obj(), least: 10, balanced: 10},
		{name: "over capacity", node: st.NewNode("n").CPU("1").Obj(),
			pod: st.NewPod("p").CPU("2").Mem("1Gi").Obj(), least: 4, balanced: 0},
		{name: "no capacity reported", node: st.NewNode("n").CPU("").Mem("").Obj(),
			pod: st.NewPod("p").CPU("1").Obj(), least: 0, balanced: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := nodeWith(tc.node, tc.existing...)
			ctx := NewPodContext(tc.pod)
			if got := (LeastRequestedPriority{}).Score(tc.pod, n, ctx); got != tc.least {
				t.Errorf("LeastRequested = %d, want %d", got, tc.least)
			}
			if got := (BalancedResourceAllocation{}).Score(tc.pod, n, ctx); got != tc.balanced {
				t.Errorf("BalancedResourceAllocation = %d, want %d", got, tc.balanced)
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
		want int64
	}{
		{"prefer present/has", NodeLabelPriority{Label: "zone", Presence: true}, labelled, 10},
		{"prefer present/lacks", NodeLabelPriority{Label: "zone", Presence: true}, bare, 0},
		{"prefer absent/has", NodeLabelPriority{Label: "zone", Presence: false}, labelled, 0},
		{"prefer absent/lacks", NodeLabelPriority{Label: "zone", Presence: false}, bare, 10},
		{"equal", EqualPriority{}, bare, 1},
		{"spreading without service", ServiceSpreadingPriority{}, bare, 10},
		{"anti-affinity without service/labelled", ServiceAntiAffinity{Label: "zone"}, labelled, 10},
		{"anti-affinity/unlabelled", ServiceAntiAffinity{Label: "zone"}, bare, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Score(pod, tc.n, ctx); got != tc.want {
				t.Fatalf("%s = %d, want %d", tc.p.Name(), got, tc.want)
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
		spread, antiAff int64
	}{
		{"a1", 0, 3}, // 10*(3-3)/3; zone a holds 4 of 6: 10*2/6 = 3
		{"a2", 6, 3}, // 10*(3-1)/3 = 6
		{"b1", 6, 8}, // zone b holds 1: 10*5/6 = 8
		{"x", 6, 0},  // unlabelled
	}
	for _, tc := range tests {
		t.Run(tc.node, func(t *testing.T) {
			n := c.Node(tc.node)
			if got := (ServiceSpreadingPriority{}).Score(pod, n, ctx); got != tc.spread {
				t.Errorf("spreading = %d, want %d", got, tc.spread)
			}
			if got := anti.Score(pod, n, ctx); got != tc.antiAff {
				t.Errorf("anti-affinity = %d, want %d", got, tc.antiAff)
			}
		})
	}
}
