package scheduler

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
)

// Pending tells whether the default scheduler must place pod: it is bound to no node,
// not being deleted, not finished, and names no other scheduler.
func Pending(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && !podpkg.Terminal(pod) &&
		(pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == corev1.DefaultSchedulerName)
}

// NodeChanged tells whether an update of a node from old may let a pod fit where it
// did not: its schedulability, labels, capacity or allocatable changed (a heartbeat
// alone does not).
func NodeChanged(old *NodeInfo, node *corev1.Node) bool {
	wasOK, _ := old.Eligible()
	ok, _ := NodeSchedulable(node)
	prev := old.Node()
	return wasOK != ok || !maps.Equal(prev.Labels, node.Labels) ||
		!apiequality.Semantic.DeepEqual(prev.Status.Allocatable, node.Status.Allocatable) ||
		!apiequality.Semantic.DeepEqual(prev.Status.Capacity, node.Status.Capacity)
}
