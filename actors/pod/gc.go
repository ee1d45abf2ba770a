package pod

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// DefaultTerminatedPodGCThreshold is --terminated-pod-gc-threshold's default, as in
// Kubernetes.
const DefaultTerminatedPodGCThreshold = 12500

// TerminatedToDelete chooses the terminated pods (Succeeded or Failed) the
// terminated-pod garbage collector deletes: when more than threshold exist, the
// oldest beyond it, by creation time (then namespace and name). Pods already being
// deleted count but are not chosen again. A threshold of 0 or less collects nothing.
func TerminatedToDelete(pods []*corev1.Pod, threshold int) []*corev1.Pod {
	if threshold <= 0 {
		return nil
	}
	var done []*corev1.Pod
	for _, p := range pods {
		if Terminal(p) {
			done = append(done, p)
		}
	}
	excess := len(done) - threshold
	if excess <= 0 {
		return nil
	}
	sort.Slice(done, func(i, j int) bool {
		a, b := done[i], done[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	out := make([]*corev1.Pod, 0, excess)
	for _, p := range done[:excess] {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}
