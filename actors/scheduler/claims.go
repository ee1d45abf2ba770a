package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ReasonUnboundClaims is VolumeClaimsBound's reason for a claim that exists but is
// not bound yet, worded as kube-scheduler's.
const ReasonUnboundClaims = "pod has unbound immediate PersistentVolumeClaims"

var _ Predicate = VolumeClaimsBound{}

// VolumeClaimsBound (policy name VolumeClaimsBound) rejects every node for a pod
// that mounts a persistentVolumeClaim which does not exist or is not bound: the pod
// waits, with a FailedScheduling event naming the claim, until its claims are bound.
// What the claims are is found once per pod, before the round (ClaimsReason and
// PodContext.SetClaims); a pod without claims costs one string comparison per node.
type VolumeClaimsBound struct{}

func (VolumeClaimsBound) Name() string { return "VolumeClaimsBound" }

func (VolumeClaimsBound) Fits(_ *corev1.Pod, _ *NodeInfo, ctx *PodContext) (bool, string) {
	if ctx.claims != "" {
		return false, ctx.claims
	}
	return true, ""
}

// ClaimsReason tells why the claims pod mounts keep it from every node ("" when
// they are all bound, or it mounts none): the first claim that get (the stored
// claim of a namespace and name, nil when absent) does not find, or finds unbound.
func ClaimsReason(pod *corev1.Pod, get func(namespace, name string) *corev1.PersistentVolumeClaim) string {
	for i := range pod.Spec.Volumes {
		src := pod.Spec.Volumes[i].PersistentVolumeClaim
		if src == nil {
			continue
		}
		c := get(pod.Namespace, src.ClaimName)
		switch {
		case c == nil:
			return fmt.Sprintf("persistentvolumeclaim %q not found", src.ClaimName)
		case c.DeletionTimestamp != nil:
			return fmt.Sprintf("persistentvolumeclaim %q is being deleted", src.ClaimName)
		case c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName == "":
			return ReasonUnboundClaims
		}
	}
	return ""
}

// SetClaims records ClaimsReason's answer in the context (it is part of the pod's
// class: pods alike but for their claims do not share bids).
func (c *PodContext) SetClaims(reason string) {
	if c.claims == reason {
		return
	}
	c.claims = reason
	c.class = c.classKey()
}
