package scheduler

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

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
		!sameResources(prev.Status.Allocatable, node.Status.Allocatable) ||
		!sameResources(prev.Status.Capacity, node.Status.Capacity)
}

// sameResources tells whether a and b hold the same quantities of the same
// resources, as apiequality.Semantic.DeepEqual does (a nil list is an empty one,
// quantities compare by value), without its reflection: the scheduler asks it of
// every heartbeat.
func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}
