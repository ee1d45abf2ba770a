package replication

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Dependents is what deleting an RC does to the pods it owns.
type Dependents struct {
	Orphan []PodPatch `json:"orphan,omitempty"` // ownerReference removed, the pod keeps running
	Delete []string   `json:"delete,omitempty"` // pod names to delete
	// Owned counts the pods the RC still owns (terminating ones included): the RC
	// held for deletion goes once none is left.
	Owned int `json:"owned,omitempty"`
}

// Done tells whether an RC held for deletion has no pod left to deal with.
func (d Dependents) Done() bool { return d.Owned == 0 }

// DependentsToDelete decides the fate of rc's pods when rc is deleted with policy:
// Orphan releases them; Background and Foreground (the default for an RC, as in
// Kubernetes) delete them. Pods are rc's when an ownerReference carries rc's UID.
func DependentsToDelete(rc *corev1.ReplicationController, pods []*corev1.Pod, policy metav1.DeletionPropagation) Dependents {
	var d Dependents
	for _, p := range pods {
		if p.Namespace != rc.Namespace || !ownedBy(p, rc) {
			continue
		}
		d.Owned++
		switch policy {
		case metav1.DeletePropagationOrphan:
			d.Orphan = append(d.Orphan, releasePatch(p, rc.UID))
		default:
			if p.DeletionTimestamp == nil {
				d.Delete = append(d.Delete, p.Name)
			}
		}
	}
	return d
}

// ownedBy is the one definition of an RC's pod: one of its ownerReferences carries
// the RC's UID.
func ownedBy(p *corev1.Pod, rc *corev1.ReplicationController) bool {
	for _, r := range p.OwnerReferences {
		if r.UID == rc.UID {
			return true
		}
	}
	return false
}
