package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/persistentvolume"
	"github.com/kubeactor/kubeactor/actors/scheduler"
	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// startVolumes starts a system with the volumes' and claims' actors on a store that
// knows their types.
func startVolumes(t *testing.T, opts ...func(*Options)) (*System, *persistence.Store) {
	t.Helper()
	st, err := persistence.Open(persistence.Options{InMemory: true, NewObject: func(r string) (kruntime.Object, error) {
		switch r {
		case "persistentvolumes":
			return &corev1.PersistentVolume{}, nil
		case "persistentvolumeclaims":
			return &corev1.PersistentVolumeClaim{}, nil
		}
		return newObject(r)
	}})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	o := Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Clock: newFakeClock(),
		Resources: append(append([]string(nil), testResources...), "persistentvolumes", "persistentvolumeclaims"), SyncPacing: -1}
	for _, f := range opts {
		f(&o)
	}
	s, err := Start(o)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop)
	return s, st
}

func testVolume(name, size string, policy corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{Kind: "PersistentVolume", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: policy,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
	}
	return pv
}

func testClaim(ns, name, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

// create prepares obj as the gateway does (uid, defaults, status reset, validation)
// and creates it.
func createStorage(t *testing.T, s *System, resource string, obj kruntime.Object) {
	t.Helper()
	r, _ := kinds.Lookup(resource)
	m, _ := meta.Accessor(obj)
	uid := types.UID(fmt.Sprintf("uid-%s-%s-%s", resource, m.GetNamespace(), m.GetName()))
	if err := kinds.PrepareCreate(r, obj, uid, time.Now()); err != nil {
		t.Errorf("prepare %s: %v", resource, err)
		return
	}
	if _, err := s.Create(context.Background(), persistence.Key{Resource: resource, Namespace: m.GetNamespace(), Name: m.GetName()}, obj); err != nil {
		t.Errorf("create %s %s: %v", resource, m.GetName(), err)
	}
}

// bindings is what the store holds of volumes and claims.
type bindings struct {
	volumes map[string]*corev1.PersistentVolume
	claims  map[string]*corev1.PersistentVolumeClaim
}

func readBinding(st *persistence.Store) bindings {
	b := bindings{volumes: map[string]*corev1.PersistentVolume{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
	st.Snapshot("persistentvolumes").Ascend("", "", func(it *persistence.Item) bool {
		pv := it.Object().(*corev1.PersistentVolume)
		b.volumes[pv.Name] = pv
		return true
	})
	st.Snapshot("persistentvolumeclaims").Ascend("", "", func(it *persistence.Item) bool {
		c := it.Object().(*corev1.PersistentVolumeClaim)
		b.claims[c.Name] = c
		return true
	})
	return b
}

func (b bindings) phases() (boundVolumes, boundClaims int) {
	for _, pv := range b.volumes {
		if pv.Status.Phase == corev1.VolumeBound {
			boundVolumes++
		}
	}
	for _, c := range b.claims {
		if c.Status.Phase == corev1.ClaimBound {
			boundClaims++
		}
	}
	return
}

// check asserts that every bound claim names a volume whose claimRef names it back
// (uid included) and that no volume serves two claims.
func (b bindings) check(t *testing.T) {
	t.Helper()
	owner := map[string]string{}
	for _, c := range b.claims {
		if c.Status.Phase != corev1.ClaimBound {
			if c.Spec.VolumeName != "" {
				t.Errorf("claim %s is %s with volumeName %q", c.Name, c.Status.Phase, c.Spec.VolumeName)
			}
			continue
		}
		pv := b.volumes[c.Spec.VolumeName]
		if pv == nil {
			t.Errorf("claim %s bound to missing volume %q", c.Name, c.Spec.VolumeName)
			continue
		}
		if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != c.Name || ref.UID != c.UID {
			t.Errorf("claim %s bound to %s, whose claimRef is %+v", c.Name, pv.Name, pv.Spec.ClaimRef)
		}
		if prev, ok := owner[pv.Name]; ok {
			t.Errorf("volume %s serves %s and %s", pv.Name, prev, c.Name)
		}
		owner[pv.Name] = c.Name
		if q := c.Status.Capacity[corev1.ResourceStorage]; q.Cmp(pv.Spec.Capacity[corev1.ResourceStorage]) != 0 {
			t.Errorf("claim %s capacity %s, volume %s", c.Name, q.String(), pv.Name)
		}
	}
	for _, pv := range b.volumes {
		if pv.Status.Phase == corev1.VolumeBound && owner[pv.Name] == "" {
			t.Errorf("volume %s is Bound to %+v, no claim names it", pv.Name, pv.Spec.ClaimRef)
		}
	}
}

// TestClaimsRaceForVolumes: 20 claims created at once race for 5 volumes; exactly 5
// bind, each volume to one claim, claimRef and volumeName agreeing. A released
// Recycle volume then goes to one of the waiting claims once its recycler pod
// Succeeded, a Retain one stays Released, a Delete one is deleted once its pod
// Succeeded; the recycler pods are deleted.
func TestClaimsRaceForVolumes(t *testing.T) {
	s, st := startVolumes(t)
	policies := []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimRetain, corev1.PersistentVolumeReclaimRecycle,
		corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain, corev1.PersistentVolumeReclaimRetain}
	for i, p := range policies {
		createStorage(t, s, "persistentvolumes", testVolume(fmt.Sprintf("pv%d", i), "1Gi", p))
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			createStorage(t, s, "persistentvolumeclaims", testClaim("default", fmt.Sprintf("claim%02d", i), "500Mi"))
		}()
	}
	wg.Wait()
	eventually(t, 20*time.Second, "5 volumes and 5 claims bound", func() bool {
		v, c := readBinding(st).phases()
		return v == 5 && c == 5
	})
	b := readBinding(st)
	b.check(t)
	if len(b.claims) != 20 {
		t.Fatalf("%d claims stored", len(b.claims))
	}

	ctx := context.Background()
	for i, want := range []corev1.PersistentVolumePhase{corev1.VolumeReleased, corev1.VolumeBound, ""} {
		pv := readBinding(st).volumes[fmt.Sprintf("pv%d", i)]
		ref := pv.Spec.ClaimRef
		if _, _, err := s.Delete(ctx, persistence.Key{Resource: "persistentvolumeclaims", Namespace: "default", Name: ref.Name}, DeleteOptions{}); err != nil {
			t.Fatalf("delete claim: %v", err)
		}
		if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
			finishRecycler(t, s, st, pv.Name, corev1.PodSucceeded)
		}
		eventually(t, 20*time.Second, fmt.Sprintf("%s (%s) reclaimed", pv.Name, pv.Spec.PersistentVolumeReclaimPolicy), func() bool {
			now, ok := readBinding(st).volumes[pv.Name]
			switch want {
			case "":
				return !ok
			case corev1.VolumeBound: // recycled, then bound by a waiting claim
				return ok && now.Status.Phase == corev1.VolumeBound && now.Spec.ClaimRef.Name != ref.Name
			}
			return ok && now.Status.Phase == want
		})
	}
	eventually(t, 20*time.Second, "3 claims bound (5, 3 deleted, 1 rebound)", func() bool {
		_, c := readBinding(st).phases()
		return c == 3
	})
	readBinding(st).check(t)
	for _, name := range []string{"pv1", "pv2"} {
		eventually(t, 20*time.Second, "recycler pod of "+name+" deleted", func() bool {
			return gone(st, podKey("default", persistentvolume.RecyclerName(name)))
		})
	}
}

// finishRecycler waits for the recycler pod of volume pv and makes it end in phase
// (as the node agent would); it checks the pod is the one DecideVolume plans.
func finishRecycler(t *testing.T, s *System, st *persistence.Store, pv string, phase corev1.PodPhase) {
	t.Helper()
	key := podKey("default", persistentvolume.RecyclerName(pv))
	var p *corev1.Pod
	eventually(t, 20*time.Second, "recycler pod of "+pv+" created", func() bool {
		it, err := st.Get(key)
		if err == nil {
			p, _ = it.Object().(*corev1.Pod)
		}
		return p != nil
	})
	if c := p.Spec.Containers; len(c) != 1 || c[0].Image != persistentvolume.DefaultRecyclerImage || p.Spec.RestartPolicy != corev1.RestartPolicyNever ||
		p.Labels[persistentvolume.RecyclerRoleLabel] != persistentvolume.RecyclerRole {
		t.Errorf("recycler pod %s: image, restart policy or label unexpected: %+v", key.Name, p)
	}
	next := p.DeepCopy()
	next.Status.Phase = phase
	if phase == corev1.PodFailed {
		next.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "recycler",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
	}
	if _, err := s.Update(context.Background(), key, next, command.Preconditions{}); err != nil {
		t.Fatalf("finish recycler pod %s: %v", key.Name, err)
	}
}

// TestRecyclerFails: a Recycle volume whose recycler pod Failed is Failed with
// reason VolumeFailedRecycle and a message naming the pod and its exit code, and
// stays so once the pod is deleted; a Delete volume outside /tmp is Failed with
// VolumeFailedDelete, keeps its object and claimRef, and no pod is made for it.
func TestRecyclerFails(t *testing.T) {
	s, st := startVolumes(t)
	ctx := context.Background()
	outside := testVolume("outside", "1Gi", corev1.PersistentVolumeReclaimDelete)
	outside.Spec.HostPath.Path = "/var/lib/outside"
	for _, pv := range []*corev1.PersistentVolume{testVolume("scrubbed", "1Gi", corev1.PersistentVolumeReclaimRecycle), outside} {
		createStorage(t, s, "persistentvolumes", pv)
		claim := testClaim("default", "for-"+pv.Name, "1Gi")
		claim.Spec.VolumeName = pv.Name
		createStorage(t, s, "persistentvolumeclaims", claim)
		eventually(t, 20*time.Second, pv.Name+" bound", func() bool {
			v := readBinding(st).volumes[pv.Name]
			return v != nil && v.Status.Phase == corev1.VolumeBound
		})
		if _, _, err := s.Delete(ctx, persistence.Key{Resource: "persistentvolumeclaims", Namespace: "default", Name: claim.Name}, DeleteOptions{}); err != nil {
			t.Fatalf("delete claim: %v", err)
		}
	}
	finishRecycler(t, s, st, "scrubbed", corev1.PodFailed)
	for name, want := range map[string][2]string{
		"scrubbed": {persistentvolume.ReasonRecycleFailed, "recycler pod default/pv-recycler-scrubbed failed: container recycler exited with code 1 (Error)"},
		"outside":  {persistentvolume.ReasonDeleteFailed, "a hostPath volume is deleted only under /tmp/; /var/lib/outside is not"},
	} {
		eventually(t, 20*time.Second, name+" Failed", func() bool {
			pv := readBinding(st).volumes[name]
			return pv != nil && pv.Status.Phase == corev1.VolumeFailed && pv.Status.Reason == want[0] && pv.Status.Message == want[1]
		})
		eventually(t, 20*time.Second, "no recycler pod of "+name, func() bool {
			return gone(st, podKey("default", persistentvolume.RecyclerName(name)))
		})
	}
	if pv := readBinding(st).volumes["outside"]; pv == nil || pv.Spec.ClaimRef == nil {
		t.Errorf("the volume outside /tmp was deleted or lost its claimRef: %+v", pv)
	}
}

// TestPodWaitsForClaim: the scheduler does not place a pod whose claim is missing,
// then unbound (FailedScheduling events name why), and places it once the claim is
// bound, without waiting out its backoff.
func TestPodWaitsForClaim(t *testing.T) {
	s, store := startVolumes(t, func(o *Options) {
		o.Scheduler, o.SchedulerSeed, o.Clock = true, 1, RealClock{}
	})
	create(t, s, st.NewNode("n1").CPU("4").Mem("8Gi").Pods(10).Obj())
	pod := st.NewPod("p").Obj()
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	create(t, s, pod)
	eventually(t, 10*time.Second, "FailedScheduling: claim not found", func() bool {
		return slices.ContainsFunc(failedScheduling(store, "p"), func(m string) bool {
			return strings.Contains(m, `persistentvolumeclaim "data" not found`)
		})
	})
	createStorage(t, s, "persistentvolumeclaims", testClaim("default", "data", "1Gi"))
	eventually(t, 10*time.Second, "FailedScheduling: claim unbound", func() bool {
		return slices.ContainsFunc(failedScheduling(store, "p"), func(m string) bool {
			return strings.Contains(m, scheduler.ReasonUnboundClaims)
		})
	})
	if n := boundTo(t, store, "p"); n != "" {
		t.Fatalf("pod with an unbound claim bound to %s", n)
	}
	createStorage(t, s, "persistentvolumes", testVolume("pv", "1Gi", corev1.PersistentVolumeReclaimRetain))
	eventually(t, 10*time.Second, "pod bound once its claim is", func() bool { return boundTo(t, store, "p") == "n1" })
}
