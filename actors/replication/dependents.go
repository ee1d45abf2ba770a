package replication

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Dependents is what deleting an RC does to the pods it owns.
type Dependents struct {
	Orphan []PodPatch `json:"orphan,omitempty"` // ownerReference removed, the pod keeps running
	Delete []string   `json:"delete,omitempty"` // pod names to delete
}

// DependentsToDelete decides the fate of rc's pods when rc is deleted with policy:
// Orphan releases them; Background and Foreground (the default for an RC, as in
// Kubernetes) delete them. Pods are rc's when an ownerReference carries rc's UID.
func DependentsToDelete(rc *corev1.ReplicationController, pods []*corev1.Pod, policy metav1.DeletionPropagation) Dependents {
	var d Dependents
	for _, p := range pods {
		if p.Namespace != rc.Namespace || !ownedBy(p, rc) {
			continue
		}
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

func ownedBy(p *corev1.Pod, rc *corev1.ReplicationController) bool {
	for _, r := range p.OwnerReferences {
		if r.UID == rc.UID {
			return true
		}
	}
	return false
}
