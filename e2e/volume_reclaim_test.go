package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reclaimDocs are a hostPath volume (name, path, reclaim policy), a claim of it
// (name) and a pod that writes a file, a dot-file and a directory into the claim.
const reclaimDocs = `apiVersion: v1
kind: PersistentVolume
metadata:
  name: %[1]s
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: %[3]s
  hostPath: {path: %[2]s}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %[4]s
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  volumeName: %[1]s
---
apiVersion: v1
kind: Pod
metadata:
  name: %[4]s-writer
spec:
  restartPolicy: Never
  containers:
  - name: writer
    image: ` + imageBusybox + `
    command: ["sh", "-c", "echo data > /data/file && echo hidden > /data/.dot && mkdir -p /data/sub/.deep && echo x > /data/sub/.deep/y"]
    volumeMounts:
    - {name: data, mountPath: /data}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: %[4]s}
`

// TestVolumeReclaim: reclaim policies on the real engine, with the recycler pods
// running the infra image the agent built from the binary under test (a tag of its
// own, so the engine's shared image is not used). A hostPath volume under /tmp with
// Recycle is bound by a claim and written by a pod (a file, a dot-file, a dot-dir);
// once the claim is deleted a recycler pod scrubs the directory: the volume goes
// Available (no claimRef), the directory stays and is empty, a new claim binds it,
// and the recycler pod is deleted. A second hostPath volume under /tmp with Delete, used the same way, is
// deleted with its directory. A third with Delete outside /tmp is Failed
// (VolumeFailedDelete) and nothing is removed.
func TestVolumeReclaim(t *testing.T) {
	requireDocker(t)
	infra := "kubeactor/pause:e2e-reclaim-" + randHex(4)
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", infra).Run() })
	s := StartServer(t, "", "--pv-recycler-image", infra)
	n := startDockerNodeOn(t, s, "--pod-infra-container-image", infra)
	ctx := context.Background()
	root, err := os.MkdirTemp("/tmp", "e2e-reclaim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	outsideRoot, err := os.MkdirTemp("/var/tmp", "e2e-reclaim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(outsideRoot) })

	type volume struct {
		name, dir, claim string
		policy           corev1.PersistentVolumeReclaimPolicy
	}
	suffix := randHex(3)
	volumes := []volume{
		{"recycled-" + suffix, filepath.Join(root, "recycled"), "recycle-data", corev1.PersistentVolumeReclaimRecycle},
		{"deleted-" + suffix, filepath.Join(root, "deleted"), "delete-data", corev1.PersistentVolumeReclaimDelete},
		{"kept-" + suffix, filepath.Join(outsideRoot, "kept"), "keep-data", corev1.PersistentVolumeReclaimDelete},
	}
	for _, v := range volumes {
		if err := os.Mkdir(v.dir, 0o777); err != nil {
			t.Fatal(err)
		}
		n.create(fmt.Sprintf(reclaimDocs, v.name, v.dir, v.policy, v.claim))
	}
	written := []string{".dot", "file", "sub"}
	for _, v := range volumes {
		n.waitPod(v.claim+"-writer", 60*time.Second, "Succeeded", finished(corev1.PodSucceeded, 0, "Completed"))
		if got := entries(t, v.dir); !slices.Equal(got, written) {
			t.Fatalf("%s holds %v after the writer, want %v", v.dir, got, written)
		}
		if err := n.cs.CoreV1().Pods("default").Delete(ctx, v.claim+"-writer", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		Eventually(t, 60*time.Second, v.claim+"-writer deleted", func() error {
			if _, err := n.pod(v.claim + "-writer"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		if err := n.cs.CoreV1().PersistentVolumeClaims("default").Delete(ctx, v.claim, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	recycled, deleted, kept := volumes[0], volumes[1], volumes[2]
	Eventually(t, 90*time.Second, recycled.name+" recycled: Available, no claimRef", func() error {
		pv, err := n.cs.CoreV1().PersistentVolumes().Get(ctx, recycled.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pv.Status.Phase != corev1.VolumeAvailable || pv.Spec.ClaimRef != nil {
			return fmt.Errorf("phase %s (%s: %s), claimRef %v", pv.Status.Phase, pv.Status.Reason, pv.Status.Message, pv.Spec.ClaimRef)
		}
		return nil
	})
	if got := entries(t, recycled.dir); len(got) != 0 {
		t.Errorf("%s holds %v after recycling, want nothing", recycled.dir, got)
	}
	n.create("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: again}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n")
	Eventually(t, 30*time.Second, "a new claim binds the recycled volume", func() error {
		c, err := n.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "again", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName != recycled.name {
			return fmt.Errorf("phase %s, volume %q", c.Status.Phase, c.Spec.VolumeName)
		}
		return nil
	})
	Eventually(t, 90*time.Second, deleted.name+" deleted, and its directory", func() error {
		_, err := n.cs.CoreV1().PersistentVolumes().Get(ctx, deleted.name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the volume is still there: %v", err)
		}
		if _, err := os.Stat(deleted.dir); !os.IsNotExist(err) {
			return fmt.Errorf("%s is still there: %v", deleted.dir, err)
		}
		return nil
	})
	Eventually(t, 30*time.Second, kept.name+" Failed with VolumeFailedDelete", func() error {
		pv, err := n.cs.CoreV1().PersistentVolumes().Get(ctx, kept.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pv.Status.Phase != corev1.VolumeFailed || pv.Status.Reason != "VolumeFailedDelete" {
			return fmt.Errorf("phase %s, reason %q", pv.Status.Phase, pv.Status.Reason)
		}
		return nil
	})
	if got := entries(t, kept.dir); !slices.Equal(got, written) {
		t.Errorf("%s holds %v after a refused delete, want %v", kept.dir, got, written)
	}
	Eventually(t, 60*time.Second, "the recycler pods deleted", func() error {
		pods, err := n.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "kubeactor.io/role=pv-recycler"})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d left, first %s (%s)", len(pods.Items), pods.Items[0].Name, pods.Items[0].Status.Phase)
		}
		return nil
	})
	out := n.s.MustKubectl(t, "", "get", "events", "--field-selector", "reason=VolumeFailedDelete")
	if !strings.Contains(out, kept.name) {
		t.Errorf("no VolumeFailedDelete event names %s:\n%s", kept.name, out)
	}
}

// entries lists the names in dir, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
