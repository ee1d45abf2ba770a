package scheduler

import (
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func TestEvaluate(t *testing.T) {
	def := DefaultPolicy()
	labelled, err := ParsePolicy([]byte(`{"predicates":[{"name":"PodFitsResources"},
		{"name":"need-rack","argument":{"labelsPresence":{"labels":["rack"],"presence":true}}}],
		"priorities":[{"name":"LeastRequestedPriority","weight":1},
		{"name":"ssd","weight":2,"argument":{"labelPreference":{"label":"ssd","presence":true}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bound := func(p *corev1.Pod, node string) *corev1.Pod { p.Spec.NodeName = node; return p }
	pvc := st.NewPod("p").Obj()
	pvc.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}

	tests := []struct {
		name    string
		pod     *corev1.Pod
		cluster Cluster
		policy  *Policy
		refused map[string]string // node -> predicate that refused it; absent: fits
		winner  string
		ties    int
		order   []string             // expected order of the verdicts, when checked
		scores  map[string][]float64 // node -> per-priority scores, when checked
	}{
		{
			name: "nodeSelector fits nowhere",
			pod:  st.NewPod("p").NodeSelector("disk", "ssd").Obj(),
			cluster: Cluster{Nodes: []*corev1.Node{
				st.NewNode("a").Obj(), st.NewNode("b").Labels("disk", "hdd").Obj(),
				st.NewNode("c").Labels("disk", "ssd").NotReady().Obj(),
				st.NewNode("d").Labels("disk", "ssd").Unschedulable().Obj()}},
			policy: &def,
			refused: map[string]string{"a": "MatchNodeSelector", "b": "MatchNodeSelector",
				"c": CheckNodeCondition, "d": CheckNodeUnschedulable},
			order: []string{"a", "b", "c", "d"},
		},
		{
			name: "a full node is refused, the emptier wins",
			pod:  st.NewPod("p").CPU("1").Mem("1Gi").Obj(),
			cluster: Cluster{
				Nodes: []*corev1.Node{st.NewNode("full").Obj(), st.NewNode("half").Obj(), st.NewNode("empty").Obj()},
				Pods: []*corev1.Pod{
					bound(st.NewPod("x").CPU("3500m").Obj(), "full"),
					bound(st.NewPod("y").CPU("2").Mem("4Gi").Obj(), "half")}},
			policy:  &def,
			refused: map[string]string{"full": "PodFitsResources"},
			winner:  "empty", ties: 1,
			order: []string{"empty", "half", "full"},
		},
		{
			name: "selector spreading prefers the node without the service's pods",
			pod:  st.NewPod("p").Labels("app", "web").Obj(),
			cluster: Cluster{
				Nodes:    []*corev1.Node{st.NewNode("n1").Obj(), st.NewNode("n2").Obj()},
				Pods:     []*corev1.Pod{bound(st.NewPod("w1").Labels("app", "web").Obj(), "n1")},
				Services: []*corev1.Service{st.NewService("web", "app", "web")}},
			policy: &def,
			winner: "n2", ties: 1,
			order: []string{"n2", "n1"},
			scores: map[string][]float64{
				"n1": {(9.5 + 7792.0*10/8192) / 2, 10 - 10*(0.05-400.0/8192), 0},
				"n2": {(9.75 + 7992.0*10/8192) / 2, 10 - 10*(0.025-200.0/8192), 10}},
		},
		{
			name: "a controller's pods spread too",
			pod:  st.NewPod("p").Labels("run", "db").Obj(),
			cluster: Cluster{
				Nodes:       []*corev1.Node{st.NewNode("n1").Obj(), st.NewNode("n2").Obj()},
				Pods:        []*corev1.Pod{bound(st.NewPod("d1").Labels("run", "db").Obj(), "n2")},
				Controllers: []*corev1.ReplicationController{st.NewRC("db", "run", "db")}},
			policy: &def,
			winner: "n1", ties: 1,
		},
		{
			name: "a bound pod is evaluated as if pending: itself not counted, other nodes not refused",
			pod:  bound(st.NewPod("p").CPU("4").Obj(), "n1"),
			cluster: Cluster{
				Nodes: []*corev1.Node{st.NewNode("n1").Obj(), st.NewNode("n2").Obj()},
				Pods:  []*corev1.Pod{bound(st.NewPod("p").CPU("4").Obj(), "n1")}},
			policy: &def,
			winner: "n1", ties: 2,
		},
		{
			name: "host port taken",
			pod:  st.NewPod("p").HostPort(80).Obj(),
			cluster: Cluster{
				Nodes: []*corev1.Node{st.NewNode("n1").Obj(), st.NewNode("n2").Obj()},
				Pods:  []*corev1.Pod{bound(st.NewPod("x").HostPort(80).Obj(), "n1")}},
			policy:  &def,
			refused: map[string]string{"n1": "PodFitsPorts"},
			winner:  "n2", ties: 1,
		},
		{
			name:    "an unbound claim refuses every node",
			pod:     pvc,
			cluster: Cluster{Nodes: []*corev1.Node{st.NewNode("n1").Obj()}, Claims: func(string, string) *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} }},
			policy:  &def,
			refused: map[string]string{"n1": "VolumeClaimsBound"},
		},
		{
			name: "a policy file's predicates and weighted priorities",
			pod:  st.NewPod("p").Obj(),
			cluster: Cluster{Nodes: []*corev1.Node{
				st.NewNode("norack").Obj(), st.NewNode("plain").Labels("rack", "r1").Obj(),
				st.NewNode("fast").Labels("rack", "r2", "ssd", "yes").Obj()}},
			policy:  &labelled,
			refused: map[string]string{"norack": "CheckNodeLabelPresence"},
			winner:  "fast", ties: 1,
			order: []string{"fast", "plain", "norack"},
			scores: map[string][]float64{
				"fast":  {(9.75 + 7992.0*10/8192) / 2, 10},
				"plain": {(9.75 + 7992.0*10/8192) / 2, 0}},
		},
		{
			name:    "no nodes",
			pod:     st.NewPod("p").Obj(),
			policy:  &def,
			refused: map[string]string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.pod.DeepCopy()
			ev := Evaluate(tc.pod, tc.cluster, tc.policy)
			if len(ev.Nodes) != len(tc.cluster.Nodes) {
				t.Fatalf("%d verdicts for %d nodes: %+v", len(ev.Nodes), len(tc.cluster.Nodes), ev.Nodes)
			}
			got := map[string]string{}
			winners := 0
			for i, v := range ev.Nodes {
				if !v.Fits {
					got[v.Node] = v.Predicate
					if v.Reason == "" || v.Scores != nil {
						t.Errorf("%s refused without a reason, or with scores: %+v", v.Node, v)
					}
				} else if v.Predicate != "" || len(v.Scores) == 0 {
					t.Errorf("%s fits but names a predicate or has no scores: %+v", v.Node, v)
				}
				if v.Winner {
					winners++
					if i != 0 || v.Node != tc.winner {
						t.Errorf("winner %s at %d, want %q first", v.Node, i, tc.winner)
					}
				}
				if tc.order != nil && v.Node != tc.order[i] {
					t.Errorf("verdict %d is %s, want %s", i, v.Node, tc.order[i])
				}
				if want, ok := tc.scores[v.Node]; ok {
					if len(v.Scores) != len(want) {
						t.Fatalf("%s scores %+v, want %v", v.Node, v.Scores, want)
					}
					total := 0.0
					for k, s := range v.Scores {
						if !near(s.Score, want[k]) {
							t.Errorf("%s %s = %v, want %v", v.Node, s.Name, s.Score, want[k])
						}
						total += float64(s.Weight) * s.Score
					}
					if !near(total, v.Score) {
						t.Errorf("%s total %v, scores sum to %v", v.Node, v.Score, total)
					}
				}
			}
			if !maps.Equal(got, tc.refused) {
				t.Errorf("refused %v, want %v", got, tc.refused)
			}
			if ev.Winner != tc.winner || ev.Ties != tc.ties || (tc.winner != "") != (winners == 1) {
				t.Errorf("winner %q ties %d (%d marked), want %q ties %d", ev.Winner, ev.Ties, winners, tc.winner, tc.ties)
			}
			if ev.Feasible != len(tc.cluster.Nodes)-len(tc.refused) {
				t.Errorf("feasible %d", ev.Feasible)
			}
			if !reflect.DeepEqual(before, tc.pod) {
				t.Errorf("Evaluate changed the pod")
			}
			checkAgainstSchedule(t, tc.pod, tc.cluster, tc.policy, ev)
		})
	}
}

// checkAgainstSchedule: the scheduler's own decision over the same cluster (a Cache
// and Schedule, ties to the first node by name) agrees with the evaluation.
func checkAgainstSchedule(t *testing.T, pod *corev1.Pod, cl Cluster, policy *Policy, ev Evaluation) {
	t.Helper()
	c := NewCache()
	for _, n := range cl.Nodes {
		c.SetNode(n)
	}
	for _, s := range cl.Services {
		c.SetService(s)
	}
	for _, rc := range cl.Controllers {
		c.SetController(rc)
	}
	for _, p := range cl.Pods {
		if PodKey(p) != PodKey(pod) {
			c.SetPod(p)
		}
	}
	pending := pod.DeepCopy()
	pending.Spec.NodeName = ""
	if cl.Claims != nil {
		// Schedule does not read claims; the actor sets them on the context.
		if ClaimsReason(pending, cl.Claims) != "" {
			return
		}
	}
	d := c.Schedule(pending, policy, func(int) int { return 0 })
	reasons := map[string]int{}
	for _, v := range ev.Nodes {
		if !v.Fits {
			reasons[v.Reason]++
		}
	}
	if d.Node != ev.Winner || d.Feasible != ev.Feasible || d.Ties != ev.Ties || (d.Ties > 0 && !near(d.Score, ev.Score)) ||
		!maps.Equal(d.Reasons, reasons) {
		t.Errorf("scheduler decided %+v, evaluation %+v", d, ev)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
