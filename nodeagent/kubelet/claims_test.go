package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
)

func TestClaimPath(t *testing.T) {
	dir := t.TempDir()
	claim := func(name, volume string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	volume := func(name, claimName string, src corev1.PersistentVolumeSource) *corev1.PersistentVolume {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource: src}}
		if claimName != "" {
			pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: claimName, UID: types.UID("uid-" + claimName)}
		}
		return pv
	}
	host := func(p string) corev1.PersistentVolumeSource {
		return corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p}}
	}
	cs := fake.NewSimpleClientset(
		claim("data", "pv-data", corev1.ClaimBound), volume("pv-data", "data", host(filepath.Join(dir, "data"))),
		claim("waiting", "", corev1.ClaimPending),
		claim("stolen", "pv-other", corev1.ClaimBound), volume("pv-other", "someone-else", host(filepath.Join(dir, "other"))),
		claim("nfs", "pv-nfs", corev1.ClaimBound), volume("pv-nfs", "nfs", corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/x"}}),
	)
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	a := New(Config{NodeName: "n1", RootDir: dir}, apiclient.NewForClientset(cs), newFakeEngine(testPause), log)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "pod-1"}}
	for _, tc := range []struct {
		claim, path, err string
	}{
		{claim: "data", path: filepath.Join(dir, "data")},
		{claim: "missing", err: `persistentvolumeclaim "missing" not found`},
		{claim: "waiting", err: `persistentvolumeclaim "waiting" is not bound`},
		{claim: "stolen", err: `persistentvolume "pv-other" is not bound to claim "stolen"`},
		{claim: "nfs", err: "only hostPath persistent volumes mount on this node"},
	} {
		t.Run(tc.claim, func(t *testing.T) {
			got, err := a.claimPath(context.Background(), pod, &corev1.PersistentVolumeClaimVolumeSource{ClaimName: tc.claim})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.path {
				t.Fatalf("path %q, %v; want %q", got, err, tc.path)
			}
			if fi, err := os.Stat(got); err != nil || !fi.IsDir() {
				t.Fatalf("the volume's directory was not made: %v", err)
			}
		})
	}
}
