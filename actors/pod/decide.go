package pod

import corev1 "k8s.io/api/core/v1"

// DefaultGrace is the grace period, in seconds, of a pod that sets none.
const DefaultGrace int64 = 30

// Grace returns the grace period, in seconds, of deleting p: 0 (at once) when p is not
// bound to a node, since no container runs to be stopped; otherwise the requested
// period, else the pod's terminationGracePeriodSeconds, else DefaultGrace.
func Grace(p *corev1.Pod, requested *int64) int64 {
	switch {
	case p.Spec.NodeName == "":
		return 0
	case requested != nil:
		return max(*requested, 0)
	case p.Spec.TerminationGracePeriodSeconds != nil:
		return max(*p.Spec.TerminationGracePeriodSeconds, 0)
	default:
		return DefaultGrace
	}
}
