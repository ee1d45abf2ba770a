package actors

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/resourcequota"
	"github.com/kubeactor/kubeactor/persistence"
)

// startQuotas starts a system with quota actors and the ResourceQuota plugin.
func startQuotas(t *testing.T, st *persistence.Store, clock Clock) *System {
	t.Helper()
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Clock: clock,
		Resources: append(append([]string(nil), testResources...), "resourcequotas"), SyncPacing: -1,
		Admission: admission.Chain{NewResourceQuota()}})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func createQuota(t *testing.T, s *System, ns, name string, hard corev1.ResourceList) {
	t.Helper()
	q := &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{Kind: "ResourceQuota", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-quota-" + name), CreationTimestamp: metav1.Now()},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}
	if _, err := s.Create(context.Background(), persistence.Key{Resource: "resourcequotas", Namespace: ns, Name: name}, q); err != nil {
		t.Fatalf("create quota: %v", err)
	}
}

// used reads the stored status.used[name] of a quota (-1 when unknown).
func used(st *persistence.Store, ns, quota string, name corev1.ResourceName) int64 {
	it, err := st.Get(persistence.Key{Resource: "resourcequotas", Namespace: ns, Name: quota})
	if err != nil {
		return -1
	}
	q, ok := it.Object().(*corev1.ResourceQuota).Status.Used[name]
	if !ok {
		return -1
	}
	return q.Value()
}

func countPods(st *persistence.Store, ns string) int {
	n := 0
	st.Snapshot("pods").Ascend(ns, "", func(*persistence.Item) bool { n++; return true })
	return n
}

// Fifty concurrent creates against a quota of ten pods admit exactly ten: the quota's
// actor charges them one at a time. Deleting pods releases their usage at the recount.
func TestQuotaChargesConcurrentCreatesAtomically(t *testing.T) {
	st := openStore(t)
	clock := newFakeClock()
	s := startQuotas(t, st, clock)
	createQuota(t, s, "ns", "quota", corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")})
	eventually(t, 10*time.Second, "quota counted", func() bool { return used(st, "ns", "quota", corev1.ResourcePods) == 0 })

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		admitted int
		refusals []error
	)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("p%02d", i)
			_, err := s.Create(context.Background(), podKey("ns", name), newPod("ns", name).obj())
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				admitted++
			} else {
				refusals = append(refusals, err)
			}
		}()
	}
	wg.Wait()
	if admitted != 10 || countPods(st, "ns") != 10 {
		t.Fatalf("admitted %d, stored %d pods; want exactly 10", admitted, countPods(st, "ns"))
	}
	for _, err := range refusals {
		if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), "is forbidden: Limited to 10 pods") {
			t.Fatalf("refusal %v: want 403 Limited to 10 pods", err)
		}
	}
	if got := used(st, "ns", "quota", corev1.ResourcePods); got != 10 {
		t.Fatalf("status.used.pods = %d, want 10", got)
	}

	var victims []persistence.Key // four of the admitted pods, whichever they are
	st.Snapshot("pods").Ascend("ns", "", func(it *persistence.Item) bool {
		victims = append(victims, it.Key)
		return len(victims) < 4
	})
	for _, k := range victims {
		if _, _, err := s.Delete(context.Background(), k, DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
			t.Fatalf("delete %s: %v", k.Name, err)
		}
	}
	eventually(t, 10*time.Second, "pods deleted", func() bool { return countPods(st, "ns") == 6 })
	const want = 6
	clock.Advance(resourcequota.ChargeTTL + resourcequota.DefaultSyncPeriod) // any unseen charge expires; the periodic recount runs
	eventually(t, 10*time.Second, "usage released", func() bool { return used(st, "ns", "quota", corev1.ResourcePods) == want })
	if _, err := s.Create(context.Background(), podKey("ns", "again"), newPod("ns", "again").obj()); err != nil {
		t.Fatalf("create after release: %v", err)
	}
}

// A pod without limits is refused where a quota covers memory or cpu; pods with
// limits are charged their sums.
func TestQuotaComputeFromLimits(t *testing.T) {
	st := openStore(t)
	s := startQuotas(t, st, newFakeClock())
	createQuota(t, s, "ns", "quota", corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourceCPU: resource.MustParse("1")})
	_, err := s.Create(context.Background(), podKey("ns", "bare"), newPod("ns", "bare").obj())
	if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), `Pod "bare" is forbidden: Limited to 256Gi memory, but pod has no specified memory limit`) {
		t.Fatalf("pod without limits: %v", err)
	}
	for i, want := range []bool{true, true, true, true, false} { // 250m each under 1 CPU
		name := fmt.Sprintf("p%d", i)
		p := newPod("ns", name).obj()
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
		_, err := s.Create(context.Background(), podKey("ns", name), p)
		if (err == nil) != want {
			t.Fatalf("create %s: %v, want admitted=%v", name, err, want)
		}
		if !want && !strings.HasSuffix(err.Error(), "Limited to 1 CPU") {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	if got := used(st, "ns", "quota", corev1.ResourceMemory); got != 4*64<<20 {
		t.Fatalf("used memory = %d, want %d", got, 4*64<<20)
	}
}

// An RC scaled past the quota stops at it, with FailedCreate events.
func TestQuotaStopsReplicationController(t *testing.T) {
	st := openStore(t)
	s := startQuotas(t, st, newFakeClock())
	createQuota(t, s, "ns", "quota", corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")})
	if _, err := s.Create(context.Background(), rcKey("ns", "web"), newRC("ns", "web", 8)); err != nil {
		t.Fatalf("create rc: %v", err)
	}
	eventually(t, 10*time.Second, "FailedCreate event", func() bool {
		found := false
		st.Snapshot("events").Ascend("ns", "", func(it *persistence.Item) bool {
			e := it.Object().(*corev1.Event)
			found = e.Reason == "FailedCreate" && strings.Contains(e.Message, "Limited to 5 pods")
			return !found
		})
		return found
	})
	// The RC creates its pods concurrently: a refused create's event may be stored
	// before an admitted create is. The pods reach the quota's 5 and never pass it.
	eventually(t, 10*time.Second, "the quota's 5 pods", func() bool { return countPods(st, "ns") >= 5 })
	if n := countPods(st, "ns"); n != 5 {
		t.Fatalf("%d pods, want the quota's 5", n)
	}
}
