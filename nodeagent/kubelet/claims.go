package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// claimPath resolves a persistentVolumeClaim volume to the host path of the volume
// the claim is bound to, preparing the directory as a DirectoryOrCreate hostPath.
// A claim that is missing or not bound yet, or bound to a volume that does not name
// it back, is an error (the sync reports FailedMount and retries). Only hostPath
// volumes mount on this node.
func (a *Agent) claimPath(ctx context.Context, pod *corev1.Pod, src *corev1.PersistentVolumeClaimVolumeSource) (string, error) {
	claim, err := a.cs.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, src.ClaimName, getOpts)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("persistentvolumeclaim %q not found", src.ClaimName)
	}
	if err != nil {
		return "", fmt.Errorf("get persistentvolumeclaim %q: %w", src.ClaimName, err)
	}
	if claim.Status.Phase != corev1.ClaimBound || claim.Spec.VolumeName == "" {
		return "", fmt.Errorf("persistentvolumeclaim %q is not bound (phase %s)", src.ClaimName, claim.Status.Phase)
	}
	pv, err := a.cs.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, getOpts)
	if err != nil {
		return "", fmt.Errorf("get persistentvolume %q of claim %q: %w", claim.Spec.VolumeName, src.ClaimName, err)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != claim.Namespace || ref.Name != claim.Name || ref.UID != claim.UID {
		return "", fmt.Errorf("persistentvolume %q is not bound to claim %q", pv.Name, src.ClaimName)
	}
	return hostPathOf(pv)
}

// hostPathOf prepares a volume's hostPath and returns it; other volume types do not
// mount on this node.
func hostPathOf(pv *corev1.PersistentVolume) (string, error) {
	h := pv.Spec.HostPath
	if h == nil {
		return "", fmt.Errorf("persistentvolume %q: only hostPath persistent volumes mount on this node", pv.Name)
	}
	src := h.DeepCopy()
	if src.Type == nil || *src.Type == corev1.HostPathUnset {
		t := corev1.HostPathDirectoryOrCreate
		src.Type = &t
	}
	if err := prepareHostPath(src); err != nil {
		return "", fmt.Errorf("persistentvolume %q: %w", pv.Name, err)
	}
	return src.Path, nil
}
