package persistentvolume

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// betaStorageClass is the annotation that named a storage class before the field.
const betaStorageClass = "volume.beta.kubernetes.io/storage-class"

// ClaimPlan is what a claim's controller does next; at most one field is set.
type ClaimPlan struct {
	// ClaimVolume is the volume's next state, naming the claim in spec.claimRef: an
	// update of the volume made from the revision it was read at.
	ClaimVolume *corev1.PersistentVolume `json:"claimVolume,omitempty"`
	// Claim is the claim's own next state (bound, or lost).
	Claim *corev1.PersistentVolumeClaim `json:"claim,omitempty"`
	// NoMatch says that no volume satisfies the claim now: it stays Pending.
	NoMatch bool `json:"noMatch,omitempty"`
}

// DecideClaim decides the next step of a claim given every volume. A bound claim
// whose volume is gone is Lost. A claim that a volume already names (claimed by the
// claim itself, or pre-bound by the volume's author) binds to it. Otherwise the claim
// claims the smallest volume that satisfies it (Satisfies), its spec.volumeName only
// when set; ties go to the volume whose name sorts first.
func DecideClaim(claim *corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume) ClaimPlan {
	if claim.DeletionTimestamp != nil {
		return ClaimPlan{}
	}
	if claim.Spec.VolumeName != "" && claim.Status.Phase != corev1.ClaimPending && claim.Status.Phase != "" {
		var pv *corev1.PersistentVolume
		for _, v := range volumes {
			if v.Name == claim.Spec.VolumeName {
				pv = v
			}
		}
		if (pv == nil || !Names(pv.Spec.ClaimRef, claim)) && claim.Status.Phase != corev1.ClaimLost {
			next := claim.DeepCopy()
			next.Status.Phase = corev1.ClaimLost
			return ClaimPlan{Claim: next}
		}
		return ClaimPlan{}
	}
	// One pass: a volume naming the claim wins over any free one; among free ones
	// the smallest, then the first by name.
	var mine, best *corev1.PersistentVolume
	var bestCap resource.Quantity
	for _, pv := range volumes {
		if claim.Spec.VolumeName != "" && pv.Name != claim.Spec.VolumeName {
			continue
		}
		if ref := pv.Spec.ClaimRef; ref != nil {
			if pv.DeletionTimestamp == nil && Names(ref, claim) && (ref.UID != "" || Satisfies(pv, claim, true)) &&
				(mine == nil || pv.Name < mine.Name) {
				mine = pv
			}
			continue
		}
		if mine != nil || !Satisfies(pv, claim, false) {
			continue
		}
		have := Capacity(pv)
		if c := have.Cmp(bestCap); best == nil || c < 0 || c == 0 && pv.Name < best.Name {
			best, bestCap = pv, have
		}
	}
	switch {
	case mine != nil && mine.Spec.ClaimRef.UID == "": // pre-bound by the volume's author: complete the reference
		return ClaimPlan{ClaimVolume: claimed(mine, claim)}
	case mine != nil:
		return ClaimPlan{Claim: bound(claim, mine)}
	case best == nil:
		return ClaimPlan{NoMatch: true}
	}
	return ClaimPlan{ClaimVolume: claimed(best, claim)}
}

// Names tells whether ref names claim: its namespace and name, and its uid when the
// reference has one (a volume pre-bound by its author names no uid).
func Names(ref *corev1.ObjectReference, claim *corev1.PersistentVolumeClaim) bool {
	return ref != nil && ref.Namespace == claim.Namespace && ref.Name == claim.Name && (ref.UID == "" || ref.UID == claim.UID)
}

// Satisfies tells whether pv can serve claim: it is not being deleted, it is free
// (no claimRef, unless prebound says the reference is the claim's own) and neither
// Released nor Failed, its capacity is at least the claim's request, its access
// modes include every mode the claim asks for, and its storage class, volume mode
// and labels (the claim's selector) match.
func Satisfies(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim, prebound bool) bool {
	if pv.DeletionTimestamp != nil || pv.Status.Phase == corev1.VolumeReleased || pv.Status.Phase == corev1.VolumeFailed {
		return false
	}
	if pv.Spec.ClaimRef != nil && !prebound {
		return false
	}
	want := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if have := Capacity(pv); have.Cmp(want) < 0 {
		return false
	}
	for _, m := range claim.Spec.AccessModes {
		found := false
		for _, h := range pv.Spec.AccessModes {
			found = found || h == m
		}
		if !found {
			return false
		}
	}
	if classOfClaim(claim) != classOfVolume(pv) || mode(claim.Spec.VolumeMode) != mode(pv.Spec.VolumeMode) {
		return false
	}
	if claim.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return false
		}
	}
	return true
}

// Capacity is the volume's storage capacity.
func Capacity(pv *corev1.PersistentVolume) resource.Quantity {
	return pv.Spec.Capacity[corev1.ResourceStorage]
}

func classOfClaim(c *corev1.PersistentVolumeClaim) string {
	if s, ok := c.Annotations[betaStorageClass]; ok {
		return s
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

func classOfVolume(pv *corev1.PersistentVolume) string {
	if s, ok := pv.Annotations[betaStorageClass]; ok {
		return s
	}
	return pv.Spec.StorageClassName
}

func mode(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *m
}

// claimed is pv with spec.claimRef naming claim.
func claimed(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	next := pv.DeepCopy()
	next.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
		Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion}
	return next
}

// bound is claim bound to pv: spec.volumeName, and a Bound status with the volume's
// capacity and access modes.
func bound(claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) *corev1.PersistentVolumeClaim {
	next := claim.DeepCopy()
	next.Spec.VolumeName = pv.Name
	next.Status.Phase = corev1.ClaimBound
	next.Status.AccessModes = append([]corev1.PersistentVolumeAccessMode(nil), pv.Spec.AccessModes...)
	next.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: pv.Spec.Capacity[corev1.ResourceStorage]}
	return next
}

// VolumePlan is what a volume's controller does next; at most one field is set.
type VolumePlan struct {
	// Volume is the volume's own next state (its phase, or a recycled volume's
	// cleared claimRef).
	Volume *corev1.PersistentVolume `json:"volume,omitempty"`
	// Delete removes the volume object (reclaim policy Delete).
	Delete bool `json:"delete,omitempty"`
}

// Reasons of the volume's status and of the binder's events.
const (
	ReasonRecycleFailed = "VolumeFailedRecycle"
	ReasonFailedBinding = "FailedBinding"
)

// DecideVolume decides a volume's next state given the claim its claimRef names
// (nil when that claim does not exist). A free volume is Available, as is one
// pre-bound to a claim (a claimRef without a uid) that is not bound yet; a volume
// whose claim exists and is the one it names is Bound; a volume whose claim is gone
// (or was replaced: another uid) is Released and then reclaimed: Retain keeps it
// Released, Delete deletes the object, Recycle makes a hostPath or NFS volume
// Available again (its data is not scrubbed) and fails any other.
func DecideVolume(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) VolumePlan {
	if pv.DeletionTimestamp != nil {
		return VolumePlan{}
	}
	ref := pv.Spec.ClaimRef
	switch {
	case ref == nil:
		return phase(pv, corev1.VolumeAvailable, "")
	case ref.UID == "":
		return phase(pv, corev1.VolumeAvailable, "")
	case claim != nil && claim.UID == ref.UID:
		if claim.Spec.VolumeName != "" && claim.Spec.VolumeName != pv.Name {
			// The claim bound elsewhere (its author named another volume): free this one.
			next := pv.DeepCopy()
			next.Spec.ClaimRef = nil
			next.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}
			return VolumePlan{Volume: next}
		}
		return phase(pv, corev1.VolumeBound, "")
	}
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimDelete:
		return VolumePlan{Delete: true}
	case corev1.PersistentVolumeReclaimRecycle:
		if pv.Spec.HostPath == nil && pv.Spec.NFS == nil {
			return phase(pv, corev1.VolumeFailed, "recycle is supported for hostPath and nfs volumes only")
		}
		next := pv.DeepCopy()
		next.Spec.ClaimRef = nil
		next.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}
		return VolumePlan{Volume: next}
	default:
		return phase(pv, corev1.VolumeReleased, "")
	}
}

// phase is the plan that writes pv's phase (and failure message) when it differs.
func phase(pv *corev1.PersistentVolume, p corev1.PersistentVolumePhase, message string) VolumePlan {
	if pv.Status.Phase == p && pv.Status.Message == message {
		return VolumePlan{}
	}
	next := pv.DeepCopy()
	next.Status.Phase = p
	next.Status.Message = message
	next.Status.Reason = ""
	if p == corev1.VolumeFailed {
		next.Status.Reason = ReasonRecycleFailed
	}
	return VolumePlan{Volume: next}
}
