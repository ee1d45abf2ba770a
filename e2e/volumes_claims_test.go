package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const claimVolumeDocs = `apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-e2e
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: %s}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 500Mi}}
`

const claimRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: keeper
spec:
  replicas: 1
  selector: {app: keeper}
  template:
    metadata:
      labels: {app: keeper}
    spec:
      containers:
      - name: app
        image: kubeactor/testserver:latest
        volumeMounts:
        - {name: data, mountPath: /data}
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: data}
`

const unclaimedPod = `apiVersion: v1
kind: Pod
metadata:
  name: no-claim
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
    volumeMounts:
    - {name: data, mountPath: /data}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: nope}
`

// TestVolumeClaims: a hostPath PersistentVolume and a claim bind; a pod of an RC
// mounts the claim on the Docker node and writes a file; the pod is deleted and the
// RC's next pod reads the file back. A pod whose claim does not exist, then exists
// unbound, is not scheduled and gets FailedScheduling events saying so. kubectl shows the
// volume and the claim Bound.
func TestVolumeClaims(t *testing.T) {
	n := startDockerNode(t)
	ctx := context.Background()
	hostDir := filepath.Join(t.TempDir(), "pv")
	if err := os.MkdirAll(hostDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hostDir, 0o777); err != nil { // whoever the container runs as may write
		t.Fatal(err)
	}
	n.create(fmt.Sprintf(claimVolumeDocs, hostDir))
	Eventually(t, 30*time.Second, "claim data Bound to pv-e2e", func() error {
		c, err := n.cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName != "pv-e2e" {
			return fmt.Errorf("phase %s, volume %q", c.Status.Phase, c.Spec.VolumeName)
		}
		pv, err := n.cs.CoreV1().PersistentVolumes().Get(ctx, "pv-e2e", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pv.Status.Phase != corev1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != c.UID {
			return fmt.Errorf("volume phase %s, claimRef %+v", pv.Status.Phase, pv.Spec.ClaimRef)
		}
		return nil
	})
	out := n.s.MustKubectl(t, "", "get", "pv,pvc")
	t.Logf("kubectl get pv,pvc:\n%s", out)
	for _, want := range []string{"persistentvolume/pv-e2e", "1Gi", "RWO", "Retain", "Bound", "default/data",
		"persistentvolumeclaim/data", "pv-e2e"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get pv,pvc lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "Bound"); got != 2 {
		t.Errorf("kubectl get pv,pvc shows Bound %d times, want 2:\n%s", got, out)
	}
	if out := n.s.MustKubectl(t, "", "describe", "pvc", "data"); !strings.Contains(out, "pv-e2e") || !strings.Contains(out, "Bound") {
		t.Errorf("kubectl describe pvc data:\n%s", out)
	}
	if out := n.s.MustKubectl(t, "", "describe", "pv", "pv-e2e"); !strings.Contains(out, "default/data") || !strings.Contains(out, hostDir) {
		t.Errorf("kubectl describe pv pv-e2e:\n%s", out)
	}

	n.create(unclaimedPod)
	Eventually(t, 30*time.Second, "FailedScheduling naming the missing claim", func() error {
		if ev := n.events("no-claim"); !strings.Contains(ev, "FailedScheduling") || !strings.Contains(ev, `persistentvolumeclaim "nope" not found`) {
			return fmt.Errorf("events:\n%s", ev)
		}
		return nil
	})
	if p, err := n.pod("no-claim"); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("pod with a missing claim: node %q, %v", p.Spec.NodeName, err)
	}
	// The claim made, but no volume fits it (5Gi; the one volume is 1Gi and taken):
	// the pod still waits, its event now saying the claim is unbound.
	n.create(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: nope
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}}
`)
	Eventually(t, 30*time.Second, "FailedScheduling for the unbound claim", func() error {
		if ev := n.events("no-claim"); !strings.Contains(ev, "unbound immediate PersistentVolumeClaims") {
			return fmt.Errorf("events:\n%s", ev)
		}
		return nil
	})
	if p, err := n.pod("no-claim"); err != nil || p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod with an unbound claim: node %q, phase %s, %v", p.Spec.NodeName, p.Status.Phase, err)
	}

	n.create(claimRC)
	first := waitRCPod(t, n, "")
	base := "http://" + first.Status.PodIP + ":8080"
	Eventually(t, 10*time.Second, "server up", func() error { _, err := httpGet(base + "/healthz"); return err })
	if _, err := httpGet(base + "/write?path=/data/kept&data=survives"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(hostDir, "kept")); err != nil || string(b) != "survives" {
		t.Fatalf("the file on the volume's host path: %q, %v", b, err)
	}
	n.s.MustKubectl(t, "", "delete", "pod", first.Name, "--grace-period=1")
	second := waitRCPod(t, n, first.Name)
	base = "http://" + second.Status.PodIP + ":8080"
	Eventually(t, 10*time.Second, "server up", func() error { _, err := httpGet(base + "/healthz"); return err })
	if got, err := httpGet(base + "/file?path=/data/kept"); err != nil || got != "survives" {
		t.Fatalf("the new pod %s reads %q, %v", second.Name, got, err)
	}
}

// waitRCPod waits for a running pod of the keeper RC other than not.
func waitRCPod(t *testing.T, n *dockerNode, not string) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	Eventually(t, 90*time.Second, "a running keeper pod other than "+not, func() error {
		list, err := n.cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=keeper"})
		if err != nil {
			return err
		}
		var seen []string
		for i := range list.Items {
			p := &list.Items[i]
			seen = append(seen, p.Name+" "+string(p.Status.Phase))
			if p.Name != not && p.DeletionTimestamp == nil && running(p) == nil && p.Status.PodIP != "" {
				found = p
				return nil
			}
		}
		return fmt.Errorf("pods %v", seen)
	})
	return found
}

// TestVolumeClaimsRace: ten claims created at once through the API race for two
// volumes; exactly two bind, each volume to one claim, and the volumes' claimRefs
// and the claims' volumeNames agree.
func TestVolumeClaimsRace(t *testing.T) {
	s := StartServer(t, "")
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2 {
		s.MustKubectl(t, fmt.Sprintf(`{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv%d"},
"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp/pv%d"}}}`, i, i), "create", "-f", "-")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim%d", i)},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
			_, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, c, metav1.CreateOptions{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var claims *corev1.PersistentVolumeClaimList
	Eventually(t, 30*time.Second, "two claims bound", func() error {
		claims, err = cs.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		bound := 0
		for _, c := range claims.Items {
			if c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		if bound != 2 {
			return fmt.Errorf("%d bound", bound)
		}
		return nil
	})
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byClaim := map[string]string{}
	for _, pv := range pvs.Items {
		if pv.Spec.ClaimRef == nil || pv.Status.Phase != corev1.VolumeBound {
			t.Fatalf("volume %s: phase %s, claimRef %+v", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef)
		}
		if _, dup := byClaim[pv.Spec.ClaimRef.Name]; dup {
			t.Fatalf("two volumes claimed by %s", pv.Spec.ClaimRef.Name)
		}
		byClaim[pv.Spec.ClaimRef.Name] = pv.Name
	}
	for _, c := range claims.Items {
		if c.Status.Phase == corev1.ClaimBound && byClaim[c.Name] != c.Spec.VolumeName {
			t.Errorf("claim %s bound to %q, volumes say %q", c.Name, c.Spec.VolumeName, byClaim[c.Name])
		}
		if c.Status.Phase != corev1.ClaimBound && (c.Spec.VolumeName != "" || byClaim[c.Name] != "") {
			t.Errorf("claim %s is %s with volume %q", c.Name, c.Status.Phase, c.Spec.VolumeName)
		}
	}
}
