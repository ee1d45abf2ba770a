package persistentvolume

import (
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
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

// VolumePlan is what a volume's controller does next: at most one of Volume, Delete
// and CreatePod, and DeletePod with any of them.
type VolumePlan struct {
	// Volume is the volume's own next state (its phase, or a recycled volume's
	// cleared claimRef).
	Volume *corev1.PersistentVolume `json:"volume,omitempty"`
	// Delete removes the volume object (reclaim policy Delete).
	Delete bool `json:"delete,omitempty"`
	// CreatePod is the recycler pod to create: it scrubs or deletes the volume's
	// data (RecyclerPod).
	CreatePod *corev1.Pod `json:"createPod,omitempty"`
	// DeletePod deletes the observed recycler pod: it finished, or it was made for
	// an earlier release of the volume.
	DeletePod bool `json:"deletePod,omitempty"`
}

// Reasons of the volume's status and of the binder's events.
const (
	ReasonRecycleFailed = "VolumeFailedRecycle"
	ReasonDeleteFailed  = "VolumeFailedDelete"
	ReasonFailedBinding = "FailedBinding"
)

// RecyclerOptions configure the pods that reclaim released volumes.
type RecyclerOptions struct {
	// Image runs the pause program of package nodeagent/pause as its entrypoint,
	// whose `scrub DIR` and `delete PATH` modes the pods use: the node agent's infra
	// image (--pv-recycler-image, the agents' --pod-infra-container-image).
	Image string
	// Namespace holds the recycler pods ("default", as in Kubernetes 1.0).
	Namespace string
}

// DefaultRecyclerImage is the infra image the agents use by default.
const DefaultRecyclerImage = "kubeactor/pause:latest"

// Labels and annotations of a recycler pod.
const (
	// RecyclerRoleLabel is the recycler pods' label (value RecyclerRole): kubectl get
	// pods -l kubeactor.io/role=pv-recycler lists them.
	RecyclerRoleLabel = "kubeactor.io/role"
	RecyclerRole      = "pv-recycler"
	// RecyclerVolumeAnnotation names the volume a recycler pod reclaims.
	RecyclerVolumeAnnotation = "kubeactor.io/persistent-volume"
	// RecyclerClaimAnnotation is the uid of the released claim (the volume's
	// claimRef) the pod reclaims the volume from: a pod of an earlier release is not
	// this one's.
	RecyclerClaimAnnotation = "kubeactor.io/released-claim-uid"
	// RecyclerMountPath is where a recycler pod mounts the volume (Recycle) or the
	// directory holding it (Delete).
	RecyclerMountPath = "/scrub"
	// DeletableHostPathRoot is the only directory under which a hostPath volume's
	// directory is deleted (Kubernetes' hostPath deleter allows /tmp/.+ only).
	DeletableHostPathRoot = "/tmp"
)

// RecyclerName is the name of the recycler pod of the volume named pv.
func RecyclerName(pv string) string { return "pv-recycler-" + pv }

// DecideVolume decides a volume's next step given the claim its claimRef names (nil
// when that claim does not exist) and its recycler pod as observed (the pod named
// RecyclerName in opts.Namespace, nil when there is none). A free volume is
// Available, as is one pre-bound to a claim (a claimRef without a uid) that is not
// bound yet; a volume whose claim exists and is the one it names is Bound; a volume
// whose claim is gone (or was replaced: another uid) is Released and then reclaimed
// by its policy:
//   - Retain keeps it Released;
//   - Recycle (hostPath and nfs; any other fails) runs a recycler pod that empties
//     the volume: once it Succeeded the volume is Available again (claimRef
//     cleared), once it Failed the volume is Failed with the pod's reason;
//   - Delete of a hostPath volume runs a pod that deletes its directory, under /tmp
//     only (elsewhere the volume fails), then deletes the object; Delete of any
//     other volume deletes the object only.
//
// A finished recycler pod is deleted with the step that reads its outcome; a pod
// made for an earlier release is deleted before anything else is done with one
// (a pod already being deleted is waited for). A Failed released volume stays
// Failed.
func DecideVolume(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim, recycler *corev1.Pod, opts RecyclerOptions) VolumePlan {
	ref := pv.Spec.ClaimRef
	released := ref != nil && ref.UID != "" && (claim == nil || claim.UID != ref.UID)
	ours := recycler != nil && released && recycler.Annotations[RecyclerClaimAnnotation] == string(ref.UID)
	stale := recycler != nil && !ours
	deletable := recycler != nil && recycler.DeletionTimestamp == nil // not being deleted already
	if pv.DeletionTimestamp != nil {
		return VolumePlan{DeletePod: deletable}
	}
	if !released {
		plan := keep(pv, claim)
		plan.DeletePod = stale && deletable
		return plan
	}
	if stale {
		return VolumePlan{DeletePod: deletable} // its name is the one a new recycler needs
	}
	if pv.Status.Phase == corev1.VolumeFailed {
		return VolumePlan{DeletePod: deletable}
	}
	policy := pv.Spec.PersistentVolumeReclaimPolicy
	switch {
	case policy == corev1.PersistentVolumeReclaimRecycle && pv.Spec.HostPath == nil && pv.Spec.NFS == nil:
		return phase(pv, corev1.VolumeFailed, ReasonRecycleFailed, "recycle is supported for hostPath and nfs volumes only")
	case policy == corev1.PersistentVolumeReclaimDelete && pv.Spec.HostPath == nil:
		return VolumePlan{Delete: true}
	case policy == corev1.PersistentVolumeReclaimDelete && !underDeletableRoot(pv.Spec.HostPath.Path):
		return phase(pv, corev1.VolumeFailed, ReasonDeleteFailed,
			fmt.Sprintf("a hostPath volume is deleted only under %s/; %s is not", DeletableHostPathRoot, pv.Spec.HostPath.Path))
	case policy != corev1.PersistentVolumeReclaimRecycle && policy != corev1.PersistentVolumeReclaimDelete:
		return phase(pv, corev1.VolumeReleased, "", "")
	}
	reason := ReasonRecycleFailed
	if policy == corev1.PersistentVolumeReclaimDelete {
		reason = ReasonDeleteFailed
	}
	if errs := validation.IsDNS1123Subdomain(RecyclerName(pv.Name)); len(errs) > 0 {
		return phase(pv, corev1.VolumeFailed, reason, "no recycler pod can be named after the volume: "+strings.Join(errs, "; "))
	}
	if pv.Status.Phase != corev1.VolumeReleased {
		return phase(pv, corev1.VolumeReleased, "", "")
	}
	switch {
	case recycler == nil:
		return VolumePlan{CreatePod: RecyclerPod(pv, opts)}
	case recycler.Status.Phase == corev1.PodFailed:
		plan := phase(pv, corev1.VolumeFailed, reason, failure(recycler))
		plan.DeletePod = deletable
		return plan
	case recycler.Status.Phase != corev1.PodSucceeded:
		return VolumePlan{} // at work, or deleted before it finished: a new one follows it
	case policy == corev1.PersistentVolumeReclaimDelete:
		return VolumePlan{Delete: true, DeletePod: deletable}
	}
	next := pv.DeepCopy()
	next.Spec.ClaimRef = nil
	next.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}
	return VolumePlan{Volume: next, DeletePod: deletable}
}

// keep is the plan of a volume that is not released: Available when free or
// pre-bound, Bound to its claim.
func keep(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) VolumePlan {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return phase(pv, corev1.VolumeAvailable, "", "")
	}
	if claim.Spec.VolumeName != "" && claim.Spec.VolumeName != pv.Name {
		// The claim bound elsewhere (its author named another volume): free this one.
		next := pv.DeepCopy()
		next.Spec.ClaimRef = nil
		next.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}
		return VolumePlan{Volume: next}
	}
	return phase(pv, corev1.VolumeBound, "", "")
}

// underDeletableRoot tells whether a hostPath volume's directory may be deleted: it is under
// DeletableHostPathRoot, and not that directory itself.
func underDeletableRoot(path string) bool {
	clean := filepath.Clean(path)
	return filepath.IsAbs(path) && strings.HasPrefix(clean, DeletableHostPathRoot+"/")
}

// RecyclerPod is the pod that reclaims pv: for Recycle it mounts the volume at
// RecyclerMountPath and empties it (`scrub /scrub`), for Delete it mounts the
// directory holding the hostPath directory and removes it (`delete /scrub/NAME`).
// It runs once (restartPolicy Never) in opts.Namespace, with opts.Image, whose
// entrypoint is the pause program (nodeagent/pause).
func RecyclerPod(pv *corev1.PersistentVolume, opts RecyclerOptions) *corev1.Pod {
	var src corev1.VolumeSource
	args := []string{"scrub", RecyclerMountPath}
	switch {
	case pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete:
		clean := filepath.Clean(pv.Spec.HostPath.Path)
		src.HostPath = &corev1.HostPathVolumeSource{Path: filepath.Dir(clean)}
		args = []string{"delete", RecyclerMountPath + "/" + filepath.Base(clean)}
	case pv.Spec.HostPath != nil:
		src.HostPath = &corev1.HostPathVolumeSource{Path: pv.Spec.HostPath.Path}
	default:
		src.NFS = pv.Spec.NFS.DeepCopy()
		src.NFS.ReadOnly = false
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        RecyclerName(pv.Name),
			Namespace:   opts.Namespace,
			Labels:      map[string]string{RecyclerRoleLabel: RecyclerRole},
			Annotations: map[string]string{RecyclerVolumeAnnotation: pv.Name, RecyclerClaimAnnotation: string(pv.Spec.ClaimRef.UID)},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:            "recycler",
				Image:           opts.Image,
				Args:            args,
				ImagePullPolicy: corev1.PullIfNotPresent,
				VolumeMounts:    []corev1.VolumeMount{{Name: "vol", MountPath: RecyclerMountPath}},
			}},
			Volumes: []corev1.Volume{{Name: "vol", VolumeSource: src}},
		},
	}
}

// failure is the message of a volume whose recycler pod failed: the pod's own
// message, else its container's termination.
func failure(p *corev1.Pod) string {
	msg := "recycler pod " + p.Namespace + "/" + p.Name + " failed"
	if p.Status.Message != "" {
		return msg + ": " + p.Status.Message
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			msg += fmt.Sprintf(": container %s exited with code %d", cs.Name, t.ExitCode)
			if t.Reason != "" {
				msg += " (" + t.Reason + ")"
			}
			if t.Message != "" {
				msg += ": " + t.Message
			}
			return msg
		}
	}
	if p.Status.Reason != "" {
		msg += ": " + p.Status.Reason
	}
	return msg
}

// phase is the plan that writes pv's phase (and failure reason and message) when it
// differs.
func phase(pv *corev1.PersistentVolume, p corev1.PersistentVolumePhase, reason, message string) VolumePlan {
	if pv.Status.Phase == p && pv.Status.Reason == reason && pv.Status.Message == message {
		return VolumePlan{}
	}
	next := pv.DeepCopy()
	next.Status.Phase = p
	next.Status.Reason = reason
	next.Status.Message = message
	return VolumePlan{Volume: next}
}
