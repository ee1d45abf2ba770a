package replication

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var now = time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)

type rcB struct{ rc *corev1.ReplicationController }

func newRC(name string, replicas int32) *rcB {
	sel := map[string]string{"app": name}
	return &rcB{&corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Generation: 1},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &replicas,
			Selector: sel,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name, "tier": "web"}, Annotations: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyAlways,
					Containers:    []corev1.Container{{Name: "c", Image: "nginx"}},
				},
			},
		},
	}}
}

func (b *rcB) minReady(s int32) *rcB { b.rc.Spec.MinReadySeconds = s; return b }
func (b *rcB) templateLabels(l map[string]string) *rcB {
	b.rc.Spec.Template.Labels = l
	return b
}
func (b *rcB) deleting() *rcB {
	ts := metav1.NewTime(now)
	b.rc.DeletionTimestamp = &ts
	return b
}
func (b *rcB) obj() *corev1.ReplicationController { return b.rc }

type podB struct{ p *corev1.Pod }

// newPod is a running, ready, scheduled pod of rc (owned by it, labelled like its template).
func newPod(name string, rc *corev1.ReplicationController) *podB {
	p := NewPod(rc, name)
	p.UID = types.UID("uid-" + name)
	p.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
	p.Spec.NodeName = "node-1"
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = "10.1.0.1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
	return &podB{p}
}

func (b *podB) orphan() *podB { b.p.OwnerReferences = nil; return b }
func (b *podB) ownedBy(uid types.UID, ctl bool) *podB {
	b.p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ReplicationController", Name: "other", UID: uid, Controller: &ctl}}
	return b
}
func (b *podB) labels(l map[string]string) *podB { b.p.Labels = l; return b }
func (b *podB) ns(ns string) *podB               { b.p.Namespace = ns; return b }
func (b *podB) unscheduled() *podB               { b.p.Spec.NodeName = ""; return b }
func (b *podB) phase(ph corev1.PodPhase) *podB   { b.p.Status.Phase = ph; return b }
func (b *podB) created(at time.Time) *podB       { b.p.CreationTimestamp = metav1.NewTime(at); return b }
func (b *podB) restarts(n int32) *podB {
	b.p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: n}}
	return b
}
func (b *podB) notReady() *podB {
	b.p.Status.Conditions[0].Status = corev1.ConditionFalse
	return b
}
func (b *podB) readySince(at time.Time) *podB {
	b.p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at)
	return b
}
func (b *podB) terminating() *podB {
	ts := metav1.NewTime(now)
	b.p.DeletionTimestamp = &ts
	return b
}
func (b *podB) obj() *corev1.Pod { return b.p }

// counter returns a Suffix yielding 00000, 00001, ...
func counter() Suffix {
	n := 0
	return func() string { n++; return fmt.Sprintf("%05d", n-1) }
}
