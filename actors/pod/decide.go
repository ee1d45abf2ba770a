package pod

import (
	"bytes"

	corev1 "k8s.io/api/core/v1"
)

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

// Terminal tells whether p has finished: Succeeded or Failed, never to run again.
func Terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// MayBeTerminal tells, from a pod's JSON (encoding/json's, as the store keeps it),
// whether it may be Terminal, without decoding it: false means it is not, true that
// the caller must decode it to know. It reads the last "phase" member, looking from
// the end: status is the pod's last member and phase its first, so that is
// status.phase, a few hundred bytes from the end, when the pod has one. Only a pod
// without a phase and with a label or annotation named "phase" valued Succeeded or
// Failed gives a false true (a JSON string cannot hold an unescaped quote, so no
// value can fake a member).
func MayBeTerminal(js []byte) bool {
	i := bytes.LastIndex(js, phaseMember)
	if i < 0 {
		return false
	}
	v := js[i+len(phaseMember):]
	return bytes.HasPrefix(v, phaseSucceeded) || bytes.HasPrefix(v, phaseFailed)
}

var (
	phaseMember    = []byte(`"phase":"`)
	phaseSucceeded = []byte(corev1.PodSucceeded + `"`)
	phaseFailed    = []byte(corev1.PodFailed + `"`)
)

// Ready tells whether p's Ready condition is True.
func Ready(p *corev1.Pod) bool {
	c := ReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// ReadyCondition returns p's Ready condition, or nil.
func ReadyCondition(p *corev1.Pod) *corev1.PodCondition { return Condition(p, corev1.PodReady) }

// Condition returns p's condition of type typ, or nil.
func Condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// KillGrace returns the seconds a running pod's containers get between SIGTERM and
// SIGKILL: the grace its deletion set, else its terminationGracePeriodSeconds, else
// DefaultGrace.
func KillGrace(p *corev1.Pod) int64 {
	switch {
	case p.DeletionGracePeriodSeconds != nil:
		return max(*p.DeletionGracePeriodSeconds, 0)
	case p.Spec.TerminationGracePeriodSeconds != nil:
		return max(*p.Spec.TerminationGracePeriodSeconds, 0)
	}
	return DefaultGrace
}
