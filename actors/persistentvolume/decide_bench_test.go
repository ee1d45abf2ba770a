package persistentvolume

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkDecideClaim: one claim against 1000 volumes, half of them bound.
func BenchmarkDecideClaim(b *testing.B) {
	var volumes []*corev1.PersistentVolume
	for i := range 1000 {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv%04d", i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(fmt.Sprintf("%dGi", 1+i%50))},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}}
		if i%2 == 0 {
			pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: fmt.Sprintf("other%d", i), UID: "u"}
			pv.Status.Phase = corev1.VolumeBound
		}
		volumes = append(volumes, pv)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c", UID: "c-1"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	b.ReportAllocs()
	for b.Loop() {
		if p := DecideClaim(claim, volumes); p.ClaimVolume == nil {
			b.Fatal("no volume")
		}
	}
}
