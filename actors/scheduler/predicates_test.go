package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

// nodeWith returns the NodeInfo of node with the pods counted on it.
func nodeWith(node *corev1.Node, pods ...*corev1.Pod) *NodeInfo {
	n := NewNodeInfo(node)
	for _, p := range pods {
		n.AddPod(p)
	}
	return n
}

func TestPredicates(t *testing.T) {
	node := st.NewNode("n1").CPU("1").Mem("1Gi").Pods(3).Labels("zone", "a", "disk", "ssd").Obj()
	tests := []struct {
		name     string
		pred     Predicate
		pod      *corev1.Pod
		existing []*corev1.Pod
		node     *corev1.Node
		reason   string // "" means fits
	}{
		{name: "ports/free", pred: PodFitsHostPorts{}, pod: st.NewPod("p").HostPort(80).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").HostPort(8080).Obj()}},
		{name: "ports/taken", pred: PodFitsHostPorts{}, pod: st.NewPod("p").HostPort(80).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").HostPort(80).Obj()}, reason: ReasonHostPorts},
		{name: "ports/other protocol", pred: PodFitsHostPorts{}, pod: st.NewPod("p").HostPortProto(corev1.ProtocolUDP, 53).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").HostPort(53).Obj()}},
		{name: "ports/no host port", pred: PodFitsHostPorts{}, pod: st.NewPod("p").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").HostPort(80).Obj()}},
		{name: "ports/terminated pod frees it", pred: PodFitsHostPorts{}, pod: st.NewPod("p").HostPort(80).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").HostPort(80).Phase(corev1.PodSucceeded).Obj()}},

		{name: "resources/fits exactly", pred: PodFitsResources{}, pod: st.NewPod("p").CPU("500m").Mem("512Mi").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").CPU("500m").Mem("512Mi").Obj()}},
		{name: "resources/cpu", pred: PodFitsResources{}, pod: st.NewPod("p").CPU("501m").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").CPU("500m").Obj()}, reason: ReasonInsufficientCPU},
		{name: "resources/memory", pred: PodFitsResources{}, pod: st.NewPod("p").Mem("1Gi").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").Mem("1").Obj()}, reason: ReasonInsufficientMemory},
		{name: "resources/limit counts when no request", pred: PodFitsResources{}, pod: st.NewPod("p").CPULimit("2").Obj(),
			reason: ReasonInsufficientCPU},
		{name: "resources/too many pods", pred: PodFitsResources{}, pod: st.NewPod("p").Obj(),
			existing: []*corev1.Pod{st.NewPod("a").Obj(), st.NewPod("b").Obj(), st.NewPod("c").Obj()}, reason: ReasonTooManyPods},
		{name: "resources/zero request fits a full node", pred: PodFitsResources{}, pod: st.NewPod("p").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").CPU("1").Mem("1Gi").Obj()}},
		{name: "resources/unreported capacity is unlimited", pred: PodFitsResources{}, pod: st.NewPod("p").CPU("64").Obj(),
			node: st.NewNode("n1").CPU("").Obj()},
		{name: "resources/init container larger than containers", pred: PodFitsResources{},
			pod: func() *corev1.Pod {
				p := st.NewPod("p").CPU("100m").Obj()
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: st.NewPod("x").CPU("2").Obj().Spec.Containers[0].Resources.Requests}}}
				return p
			}(), reason: ReasonInsufficientCPU},

		{name: "disk/gce same pd", pred: NoDiskConflict{}, pod: st.NewPod("p").GCEPD("pd1", false).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").GCEPD("pd1", false).Obj()}, reason: ReasonDiskConflict},
		{name: "disk/gce one read-write", pred: NoDiskConflict{}, pod: st.NewPod("p").GCEPD("pd1", true).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").GCEPD("pd1", false).Obj()}, reason: ReasonDiskConflict},
		{name: "disk/gce both read-only", pred: NoDiskConflict{}, pod: st.NewPod("p").GCEPD("pd1", true).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").GCEPD("pd1", true).Obj()}},
		{name: "disk/gce other pd", pred: NoDiskConflict{}, pod: st.NewPod("p").GCEPD("pd2", false).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").GCEPD("pd1", false).Obj()}},
		{name: "disk/ebs always exclusive", pred: NoDiskConflict{}, pod: st.NewPod("p").EBS("vol-1", true).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").EBS("vol-1", true).Obj()}, reason: ReasonDiskConflict},
		{name: "disk/ebs vs gce same id", pred: NoDiskConflict{}, pod: st.NewPod("p").EBS("x", false).Obj(),
			existing: []*corev1.Pod{st.NewPod("e").GCEPD("x", false).Obj()}},
		{name: "disk/rbd shared monitor", pred: NoDiskConflict{}, pod: st.NewPod("p").RBD("", "img", false, "m1", "m2").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").RBD("rbd", "img", false, "m2").Obj()}, reason: ReasonDiskConflict},
		{name: "disk/rbd disjoint monitors", pred: NoDiskConflict{}, pod: st.NewPod("p").RBD("rbd", "img", false, "m1").Obj(),
			existing: []*corev1.Pod{st.NewPod("e").RBD("rbd", "img", false, "m2").Obj()}},

		{name: "selector/none", pred: MatchNodeSelector{}, pod: st.NewPod("p").Obj()},
		{name: "selector/match", pred: MatchNodeSelector{}, pod: st.NewPod("p").NodeSelector("zone", "a", "disk", "ssd").Obj()},
		{name: "selector/wrong value", pred: MatchNodeSelector{}, pod: st.NewPod("p").NodeSelector("zone", "b").Obj(), reason: ReasonNodeSelector},
		{name: "selector/missing key", pred: MatchNodeSelector{}, pod: st.NewPod("p").NodeSelector("gpu", "yes").Obj(), reason: ReasonNodeSelector},

		{name: "hostname/unset", pred: HostName{}, pod: st.NewPod("p").Obj()},
		{name: "hostname/this node", pred: HostName{}, pod: st.NewPod("p").Node("n1").Obj()},
		{name: "hostname/other node", pred: HostName{}, pod: st.NewPod("p").Node("n2").Obj(), reason: ReasonHostName},

		{name: "presence/all present", pred: CheckNodeLabelPresence{Labels: []string{"zone", "disk"}, Presence: true}, pod: st.NewPod("p").Obj()},
		{name: "presence/one missing", pred: CheckNodeLabelPresence{Labels: []string{"zone", "gpu"}, Presence: true}, pod: st.NewPod("p").Obj(), reason: ReasonLabelPresence},
		{name: "absence/none present", pred: CheckNodeLabelPresence{Labels: []string{"retiring"}, Presence: false}, pod: st.NewPod("p").Obj()},
		{name: "absence/present", pred: CheckNodeLabelPresence{Labels: []string{"retiring", "zone"}, Presence: false}, pod: st.NewPod("p").Obj(), reason: ReasonLabelPresence},

		{name: "affinity/unconstrained", pred: CheckServiceAffinity{Labels: []string{"zone"}}, pod: st.NewPod("p").Obj()},
		{name: "affinity/node selector pins", pred: CheckServiceAffinity{Labels: []string{"zone"}}, pod: st.NewPod("p").NodeSelector("zone", "b").Obj(), reason: ReasonServiceAffinity},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nd := tc.node
			if nd == nil {
				nd = node
			}
			n := nodeWith(nd, tc.existing...)
			ok, reason := tc.pred.Fits(tc.pod, n, NewPodContext(tc.pod))
			if ok != (tc.reason == "") || reason != tc.reason {
				t.Fatalf("Fits = %v, %q; want reason %q", ok, reason, tc.reason)
			}
		})
	}
}

func TestNodeSchedulable(t *testing.T) {
	noCond := st.NewNode("n").Obj()
	noCond.Status.Conditions = nil
	tests := []struct {
		name   string
		node   *corev1.Node
		reason string
	}{
		{"ready", st.NewNode("n").Obj(), ""},
		{"not ready", st.NewNode("n").NotReady().Obj(), ReasonNotReady},
		{"no conditions", noCond, ReasonNotReady},
		{"unschedulable", st.NewNode("n").Unschedulable().Obj(), ReasonUnschedulable},
		{"nil", nil, ReasonNotReady},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := NodeSchedulable(tc.node)
			if ok != (tc.reason == "") || reason != tc.reason {
				t.Fatalf("NodeSchedulable = %v, %q; want %q", ok, reason, tc.reason)
			}
		})
	}
}
