package pod

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var bindingResource = schema.GroupResource{Resource: "pods/binding"}

// Bind applies the binding b to cur at now, as the API server's pods/binding does, and
// returns the bound pod (cur is not modified). It refuses, with a Conflict, a pod that
// is being deleted, is bound already or whose uid is not the binding's (when the
// binding names one), and with Invalid a binding without a target node. The pod gets
// spec.nodeName, the binding's annotations over its own and PodScheduled=True.
func Bind(cur *corev1.Pod, b *corev1.Binding, now time.Time) (*corev1.Pod, error) {
	switch {
	case b.Target.Name == "":
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), b.Name,
			field.ErrorList{field.Required(field.NewPath("target", "name"), "")})
	case cur.DeletionTimestamp != nil:
		return nil, apierrors.NewConflict(bindingResource, b.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", cur.Name))
	case cur.Spec.NodeName != "":
		return nil, apierrors.NewConflict(bindingResource, b.Name, fmt.Errorf("pod %s is already assigned to node %q", cur.Name, cur.Spec.NodeName))
	case b.UID != "" && b.UID != cur.UID:
		return nil, apierrors.NewConflict(bindingResource, b.Name, fmt.Errorf("the UID in the binding (%s) does not match the pod's (%s)", b.UID, cur.UID))
	}
	pod := cur.DeepCopy()
	pod.Spec.NodeName = b.Target.Name
	if len(b.Annotations) > 0 && pod.Annotations == nil {
		pod.Annotations = make(map[string]string, len(b.Annotations))
	}
	for k, v := range b.Annotations {
		pod.Annotations[k] = v
	}
	SetCondition(pod, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, now)
	return pod, nil
}

// SetCondition sets a condition of p as Kubernetes does: c replaces the condition of
// its type, keeping the last transition time unless the status changes (then it is
// now); a new condition is appended.
func SetCondition(p *corev1.Pod, c corev1.PodCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	for i := range p.Status.Conditions {
		old := &p.Status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	p.Status.Conditions = append(p.Status.Conditions, c)
}
