package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVolumeClaimsBound(t *testing.T) {
	now := metav1.Now()
	claims := map[string]*corev1.PersistentVolumeClaim{
		"bound":    {ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv1"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}},
		"pending":  {ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
		"deleting": {ObjectMeta: metav1.ObjectMeta{Name: "deleting", DeletionTimestamp: &now}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv2"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}},
	}
	get := func(ns, name string) *corev1.PersistentVolumeClaim {
		if ns != "default" {
			return nil
		}
		return claims[name]
	}
	podWith := func(names ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		for _, n := range names {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n}}})
		}
		return p
	}
	n := &NodeInfo{name: "n1", eligible: true}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		reason string
	}{
		{"no claims", podWith(), ""},
		{"bound", podWith("bound"), ""},
		{"missing", podWith("bound", "nope"), `persistentvolumeclaim "nope" not found`},
		{"pending", podWith("pending"), ReasonUnboundClaims},
		{"deleting", podWith("deleting"), `persistentvolumeclaim "deleting" is being deleted`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ClaimsReason(tc.pod, get)
			if got != tc.reason {
				t.Fatalf("ClaimsReason = %q, want %q", got, tc.reason)
			}
			ctx := NewPodContext(tc.pod)
			plain := ctx.class
			ctx.SetClaims(got)
			ok, why := VolumeClaimsBound{}.Fits(tc.pod, n, ctx)
			if ok != (tc.reason == "") || why != tc.reason {
				t.Fatalf("Fits = %v %q, want reason %q", ok, why, tc.reason)
			}
			if (ctx.class != plain) != (tc.reason != "") {
				t.Fatalf("class %q, without claims %q", ctx.class, plain)
			}
			policy := DefaultPolicy()
			b := policy.Bid(tc.pod, n, ctx)
			if b.Fits != (tc.reason == "") || b.Reason != tc.reason {
				t.Fatalf("default policy bid = %+v, want reason %q", b, tc.reason)
			}
		})
	}
}
