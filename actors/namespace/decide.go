package namespace

import corev1 "k8s.io/api/core/v1"

// Terminate marks ns (the caller's own copy) as being terminated.
func Terminate(ns *corev1.Namespace) { ns.Status.Phase = corev1.NamespaceTerminating }

// Step is what a namespace does next.
type Step int

// The steps of termination.
const (
	Idle           Step = iota // not terminating, or waiting for replies or finalizers
	DeleteContents             // ask every object still in the namespace to delete itself
	Recheck                    // contents are terminating: look again later
	Finalize                   // empty: clear spec.finalizers (the namespace controller's "kubernetes")
	Remove                     // empty, finalized and unheld: delete the namespace itself
)

// Decide returns the next step of ns given the number of objects still in it, the
// delete requests still unanswered and whether deletes were already sent since the
// last recheck.
func Decide(ns *corev1.Namespace, remaining, outstanding int, swept bool) Step {
	switch {
	case ns == nil || ns.DeletionTimestamp == nil || outstanding > 0:
		return Idle
	case remaining == 0 && len(ns.Spec.Finalizers) > 0:
		return Finalize
	case remaining == 0 && len(ns.Finalizers) > 0:
		return Idle // metadata finalizers belong to others; their update wakes us
	case remaining == 0:
		return Remove
	case !swept:
		return DeleteContents
	default:
		return Recheck
	}
}
