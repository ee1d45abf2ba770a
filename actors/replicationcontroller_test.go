package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

func rcKey(ns, name string) persistence.Key {
	return persistence.Key{Resource: "replicationcontrollers", Namespace: ns, Name: name}
}

func newRC(ns, name string, replicas int32) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		TypeMeta: metav1.TypeMeta{Kind: "ReplicationController", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-rc-" + name), Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Now())},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &replicas,
			Selector: map[string]string{"app": name},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.7.9"}}},
			},
		},
	}
}

// rcPods returns the pods of namespace ns whose controller is the RC named rc.
func rcPods(st *persistence.Store, ns, rc string) (owned []*corev1.Pod, all []*corev1.Pod) {
	st.Snapshot("pods").Ascend(ns, "", func(it *persistence.Item) bool {
		p := it.Object().(*corev1.Pod)
		all = append(all, p)
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Name == rc {
			owned = append(owned, p)
		}
		return true
	})
	return owned, all
}

func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, check)
}

// activeOwned counts an RC's pods that are not terminating.
func activeOwned(st *persistence.Store, ns, rc string) int {
	owned, _ := rcPods(st, ns, rc)
	n := 0
	for _, p := range owned {
		if p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func waitReplicas(t *testing.T, st *persistence.Store, ns, rc string, want int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("rc %s has %d pods", rc, want), func() error {
		if n := activeOwned(st, ns, rc); n != want {
			return fmt.Errorf("%d active pods", n)
		}
		it, err := st.Get(rcKey(ns, rc))
		if err != nil {
			return err
		}
		r := it.Object().(*corev1.ReplicationController)
		if int(r.Status.Replicas) != want || r.Status.ObservedGeneration != r.Generation {
			return fmt.Errorf("status %+v, generation %d", r.Status, r.Generation)
		}
		return nil
	})
}

// scaleRC sets an RC's replicas as a client would: read, change, update with the
// revision read, and again on a conflict (the RC's actor writes its status meanwhile).
func scaleRC(t *testing.T, s *System, st *persistence.Store, ns, name string, replicas int32) {
	t.Helper()
	for {
		it, err := st.Get(rcKey(ns, name))
		if err != nil {
			t.Fatal(err)
		}
		next := it.Object().DeepCopyObject().(*corev1.ReplicationController)
		next.Spec.Replicas = &replicas
		next.Generation++
		_, err = s.Update(context.Background(), rcKey(ns, name), next, command.Preconditions{ResourceVersion: it.Revision})
		if errors.Is(err, persistence.ErrConflict) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
}

func TestRCKeepsReplicas(t *testing.T) {
	st := openStore(t)
	// With the server's sync pacing, unlike the other tests.
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Resources: testResources})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	ctx := context.Background()
	if _, err := s.Create(ctx, rcKey("default", "web"), newRC("default", "web", 3)); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, st, "default", "web", 3)
	owned, _ := rcPods(st, "default", "web")
	for _, p := range owned {
		ref := metav1.GetControllerOf(p)
		if !strings.HasPrefix(p.Name, "web-") || len(p.Name) != len("web-")+5 {
			t.Errorf("pod name %q is not web-<5 chars>", p.Name)
		}
		if ref.UID != "uid-rc-web" || ref.Kind != "ReplicationController" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s owner reference %+v", p.Name, ref)
		}
		if p.UID == "" || p.Spec.RestartPolicy != corev1.RestartPolicyAlways || p.Labels["app"] != "web" {
			t.Errorf("pod %s is not prepared like a created pod: %+v", p.Name, p)
		}
	}

	for _, n := range []int32{1, 5, 0, 2} {
		scaleRC(t, s, st, "default", "web", n)
		waitReplicas(t, st, "default", "web", int(n))
	}

	// A pod deleted by someone else is replaced.
	owned, _ = rcPods(st, "default", "web")
	zero := int64(0)
	if _, _, err := s.Delete(ctx, podKey("default", owned[0].Name), DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replacement pod", func() error {
		now, _ := rcPods(st, "default", "web")
		if len(now) != 2 || now[0].Name == owned[0].Name || now[1].Name == owned[0].Name {
			return fmt.Errorf("pods %v", names(now))
		}
		return nil
	})
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// TestRCAdoptsOrphans is the book's Cassandra example: pods created by hand with the
// RC's labels are adopted and count towards its replicas.
func TestRCAdoptsOrphans(t *testing.T) {
	st := openStore(t)
	s := startSystem(t, st, RealClock{})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		p := newPod("default", fmt.Sprintf("cassandra-%d", i)).obj()
		p.Labels = map[string]string{"app": "cassandra"}
		if _, err := s.Create(ctx, podKey("default", p.Name), p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, rcKey("default", "cassandra"), newRC("default", "cassandra", 3)); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, st, "default", "cassandra", 3)
	owned, all := rcPods(st, "default", "cassandra")
	if len(all) != 3 || len(owned) != 3 {
		t.Fatalf("pods %v, owned %v: want the 2 orphans adopted and 1 created", names(all), names(owned))
	}
}

func TestRCDeletionPropagation(t *testing.T) {
	tests := []struct {
		policy   string
		wantPods int // pods left once the RC is gone
	}{
		{"Background", 0},
		{"Foreground", 0},
		{"Orphan", 2},
		{"", 2}, // no policy: the core/v1 API orphans an RC's pods
	}
	for _, tt := range tests {
		t.Run("policy "+tt.policy, func(t *testing.T) {
			st := openStore(t)
			s := startSystem(t, st, RealClock{})
			ctx := context.Background()
			if _, err := s.Create(ctx, rcKey("default", "web"), newRC("default", "web", 2)); err != nil {
				t.Fatal(err)
			}
			waitReplicas(t, st, "default", "web", 2)
			if _, _, err := s.Delete(ctx, rcKey("default", "web"), DeleteOptions{PropagationPolicy: tt.policy}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "rc gone and pods settled", func() error {
				if _, err := st.Get(rcKey("default", "web")); err == nil {
					return fmt.Errorf("rc still stored")
				}
				_, all := rcPods(st, "default", "web")
				if len(all) != tt.wantPods {
					return fmt.Errorf("%d pods left, want %d", len(all), tt.wantPods)
				}
				for _, p := range all {
					if len(p.OwnerReferences) != 0 {
						return fmt.Errorf("orphan %s still has owners %+v", p.Name, p.OwnerReferences)
					}
				}
				return nil
			})
		})
	}
}

// TestRCRestartCreatesNoDuplicate panics the RC's actor in the middle of a scale-up
// and restarts the whole system in the middle of another: the RC ends with exactly
// its replicas and no pod is ever created twice.
func TestRCRestartCreatesNoDuplicate(t *testing.T) {
	st := openStore(t)
	s := startSystem(t, st, RealClock{})
	ctx := context.Background()
	if _, err := s.Create(ctx, rcKey("default", "web"), newRC("default", "web", 300)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.InjectPanic(ctx, rcKey("default", "web")); err != nil {
			t.Fatal(err)
		}
	}
	waitReplicas(t, st, "default", "web", 300)

	scaleRC(t, s, st, "default", "web", 1000)
	s.Stop()
	s2 := startSystem(t, st, RealClock{})
	waitReplicas(t, st, "default", "web", 1000)
	_ = s2
	owned, all := rcPods(st, "default", "web")
	if len(owned) != 1000 || len(all) != 1000 {
		t.Fatalf("%d owned of %d pods, want exactly 1000", len(owned), len(all))
	}
}
