package actors

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/actors/control"
	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// children lists the keys of the objects of resource that have an actor, in order.
func children(t testing.TB, s *System, resource string) []objKey {
	t.Helper()
	res, err := s.system.Root.RequestFuture(s.env.managers[resource], &childrenRequest{}, 10*time.Second).Result()
	if err != nil {
		t.Fatalf("children of %s: %v", resource, err)
	}
	keys := res.(*childrenReply).keys
	slices.SortFunc(keys, func(a, b objKey) int {
		if a.namespace != b.namespace {
			return compare(a.namespace, b.namespace)
		}
		return compare(a.name, b.name)
	})
	return keys
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// storeWithPods stores, before any system starts: namespace ns, n bound pods ns/p0…,
// an unbound pod ns/free, a configmap ns/cm and a pod ns/dying whose 30 s grace
// period started at the clock's now.
func storeWithPods(t *testing.T, clock *fakeClock, n int) *persistence.Store {
	t.Helper()
	st := openStore(t)
	cmds := []persistence.Command{
		{Op: persistence.OpCreate, Key: persistence.Key{Resource: "namespaces", Name: "ns"}, Object: nsObj("ns")},
		{Op: persistence.OpCreate, Key: podKey("ns", "free"), Object: newPod("ns", "free").obj()},
		{Op: persistence.OpCreate, Key: persistence.Key{Resource: "configmaps", Namespace: "ns", Name: "cm"}, Object: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "uid-cm"},
		}},
	}
	dying := newPod("ns", "dying").node("n1").obj()
	dying.DeletionTimestamp = ptrTime(clock.Now().Add(30 * time.Second))
	dying.DeletionGracePeriodSeconds = ptr(int64(30))
	cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("ns", "dying"), Object: dying})
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("ns", name), Object: newPod("ns", name).node("n1").obj()})
	}
	if _, _, err := st.Apply(context.Background(), cmds...); err != nil {
		t.Fatal(err)
	}
	return st
}

// A system started on stored pods spawns an actor only for the pod whose grace period
// is running (and for every object of an eager kind); a request for any other pod
// spawns its actor, which serves it from the stored state.
func TestActorsOnDemand(t *testing.T) {
	const n = 100
	ctx := context.Background()
	tests := []struct {
		name string
		// act runs against the freshly started system; check looks at the store.
		act   func(t *testing.T, s *System, clock *fakeClock) error
		check func(t *testing.T, st *persistence.Store)
		// spawned are the pods with an actor afterwards.
		spawned []string
	}{
		{
			name:    "nothing asked",
			act:     func(*testing.T, *System, *fakeClock) error { return nil },
			spawned: []string{"dying"},
		},
		{
			name: "update",
			act: func(_ *testing.T, s *System, _ *fakeClock) error {
				_, err := s.Update(ctx, podKey("ns", "p1"), newPod("ns", "p1").node("n1").image("redis").obj(), command.Preconditions{})
				return err
			},
			check: func(t *testing.T, st *persistence.Store) {
				if it, err := st.Get(podKey("ns", "p1")); err != nil || it.Object().(*corev1.Pod).Spec.Containers[0].Image != "redis" {
					t.Fatalf("update not stored: %v", err)
				}
			},
			spawned: []string{"dying", "p1"},
		},
		{
			name: "create over a stored pod",
			act: func(_ *testing.T, s *System, _ *fakeClock) error {
				if _, err := s.Create(ctx, podKey("ns", "p2"), newPod("ns", "p2").image("redis").obj()); !errors.Is(err, persistence.ErrAlreadyExists) {
					return fmt.Errorf("create over p2: %v, want AlreadyExists", err)
				}
				return nil
			},
			check: func(t *testing.T, st *persistence.Store) {
				if it, err := st.Get(podKey("ns", "p2")); err != nil || it.Object().(*corev1.Pod).Spec.Containers[0].Image != "nginx" {
					t.Fatalf("p2 changed by a refused create: %v", err)
				}
			},
			spawned: []string{"dying", "p2"},
		},
		{
			name: "create new",
			act: func(_ *testing.T, s *System, _ *fakeClock) error {
				_, err := s.Create(ctx, podKey("ns", "new"), newPod("ns", "new").obj())
				return err
			},
			check: func(t *testing.T, st *persistence.Store) {
				if gone(st, podKey("ns", "new")) {
					t.Fatal("created pod not stored")
				}
			},
			spawned: []string{"dying", "new"},
		},
		{
			name: "binding",
			act: func(_ *testing.T, s *System, clock *fakeClock) error {
				it, err := s.env.store.Get(podKey("ns", "free"))
				if err != nil {
					return err
				}
				cur := it.Object().(*corev1.Pod)
				next, err := podpkg.Bind(cur, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "free"},
					Target: corev1.ObjectReference{Kind: "Node", Name: "n2"}}, clock.Now())
				if err != nil {
					return err
				}
				_, err = s.Update(WithSubresource(ctx, "binding"), podKey("ns", "free"), next,
					command.Preconditions{UID: cur.UID, ResourceVersion: it.Revision})
				return err
			},
			check: func(t *testing.T, st *persistence.Store) {
				if it, err := st.Get(podKey("ns", "free")); err != nil || it.Object().(*corev1.Pod).Spec.NodeName != "n2" {
					t.Fatalf("binding not stored: %v", err)
				}
			},
			spawned: []string{"dying", "free"},
		},
		{
			name: "delete with grace",
			act: func(t *testing.T, s *System, clock *fakeClock) error {
				obj, isGone, err := s.Delete(ctx, podKey("ns", "p3"), DeleteOptions{GracePeriodSeconds: ptr(int64(10))})
				if err != nil || isGone || obj.(*corev1.Pod).DeletionTimestamp == nil {
					return fmt.Errorf("delete p3: gone %v, %v", isGone, err)
				}
				probe(t, s, podKey("ns", "p3")) // its timer is set
				clock.Advance(11 * time.Second)
				eventually(t, 5*time.Second, "p3 removed after its grace", func() bool { return gone(s.env.store, podKey("ns", "p3")) })
				return nil
			},
			check: func(t *testing.T, st *persistence.Store) {
				if gone(st, podKey("ns", "dying")) {
					t.Fatal("dying removed before its grace period ended")
				}
			},
			spawned: []string{"dying"}, // p3's actor stops once its pod is gone
		},
		{
			name: "stored grace period expires",
			act: func(t *testing.T, s *System, clock *fakeClock) error {
				probe(t, s, podKey("ns", "dying")) // its timer is set
				clock.Advance(31 * time.Second)
				eventually(t, 5*time.Second, "dying removed after its grace", func() bool { return gone(s.env.store, podKey("ns", "dying")) })
				return nil
			},
		},
		{
			name: "idle actors stop",
			act: func(t *testing.T, s *System, clock *fakeClock) error {
				// dying's grace period ends first: its actor is gone before the sweeps.
				clock.Advance(31 * time.Second)
				eventually(t, 5*time.Second, "dying removed after its grace", func() bool { return gone(s.env.store, podKey("ns", "dying")) })
				for _, name := range []string{"p5", "p6"} {
					probe(t, s, podKey("ns", name)) // spawned by a request
				}
				// p8 terminating: its grace period needs its actor.
				if _, _, err := s.Delete(ctx, podKey("ns", "p8"), DeleteOptions{GracePeriodSeconds: ptr(int64(600))}); err != nil {
					return err
				}
				sweep := func() {
					clock.Advance(DefaultIdleAfter)
					children(t, s, "pods") // after the sweep, in the manager's mailbox
				}
				sweep()                         // p5, p6 and p8 were just asked for
				probe(t, s, podKey("ns", "p6")) // asked again meanwhile: it stays a sweep longer
				eventually(t, 5*time.Second, "pod actors after one sweep", func() bool {
					return slices.Equal(children(t, s, "pods"), []objKey{{"ns", "p5"}, {"ns", "p6"}, {"ns", "p8"}})
				})
				sweep() // p5 idle for a whole sweep
				return nil
			},
			spawned: []string{"p6", "p8"},
		},
		{
			name: "a stopped idle actor serves again",
			act: func(t *testing.T, s *System, clock *fakeClock) error {
				probe(t, s, podKey("ns", "p7"))
				for range 2 {
					clock.Advance(DefaultIdleAfter)
					children(t, s, "pods") // after the sweep, in the manager's mailbox
				}
				eventually(t, 5*time.Second, "p7's actor stopped", func() bool {
					return !slices.Contains(children(t, s, "pods"), objKey{"ns", "p7"})
				})
				_, err := s.Update(ctx, podKey("ns", "p7"), newPod("ns", "p7").node("n1").image("redis").obj(), command.Preconditions{})
				return err
			},
			check: func(t *testing.T, st *persistence.Store) {
				if it, err := st.Get(podKey("ns", "p7")); err != nil || it.Object().(*corev1.Pod).Spec.Containers[0].Image != "redis" {
					t.Fatalf("update after the idle stop not stored: %v", err)
				}
			},
			spawned: []string{"p7"}, // dying's grace ended meanwhile
		},
		{
			name: "resync of a pod without an actor",
			act: func(_ *testing.T, s *System, _ *fakeClock) error {
				s.system.Root.Send(s.env.managers["pods"], &resyncRequest{envelope: envelope{key: podKey("ns", "p4")}})
				return nil
			},
			spawned: []string{"dying"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			st := storeWithPods(t, clock, n)
			s := startSystem(t, st, clock)
			if got := children(t, s, "configmaps"); len(got) != 0 {
				t.Fatalf("configmap actors at start: %v", got)
			}
			if got, want := children(t, s, "namespaces"), []objKey{{"", "ns"}}; !slices.Equal(got, want) {
				t.Fatalf("namespace actors at start: %v, want %v (an eager kind)", got, want)
			}
			if err := tc.act(t, s, clock); err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, st)
			}
			var want []objKey
			for _, name := range tc.spawned {
				want = append(want, objKey{"ns", name})
			}
			eventually(t, 5*time.Second, "pod actors", func() bool { return slices.Equal(children(t, s, "pods"), want) })
		})
	}
}

// A pod whose grace period started before a restart is removed when it ends after the
// restart: its actor is spawned at start although nothing asks for it.
func TestGraceExpiresAfterRestart(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	st := storeWithPods(t, clock, 10)
	k := podKey("ns", "p5")
	s := startSystem(t, st, clock)
	if _, isGone, err := s.Delete(ctx, k, DeleteOptions{GracePeriodSeconds: ptr(int64(60))}); err != nil || isGone {
		t.Fatalf("delete: gone %v, %v", isGone, err)
	}
	s.Stop()

	clock.Advance(20 * time.Second)
	s = startSystem(t, st, clock)
	if got, want := children(t, s, "pods"), []objKey{{"ns", "dying"}, {"ns", "p5"}}; !slices.Equal(got, want) {
		t.Fatalf("pod actors after restart: %v, want %v", got, want)
	}
	probe(t, s, k) // its timer is set
	clock.Advance(30 * time.Second)
	if gone(st, k) {
		t.Fatal("p5 removed before its grace period ended")
	}
	clock.Advance(11 * time.Second)
	eventually(t, 5*time.Second, "p5 removed after its grace", func() bool { return gone(st, k) })
}

// No kind whose objects get actors on demand is resynced by a feed, has a manager
// extension or reports what it stores to its manager: each of those needs an actor
// for every object.
func TestOnDemandKinds(t *testing.T) {
	e := &env{}
	for _, r := range DefaultResources {
		if !onDemand(r) {
			continue
		}
		if newManagerExt(&env{nodes: NodeOptions{PodCIDRs: PodCIDROptions{Allocate: true}}}, r) != nil || reportsStored(r) {
			t.Errorf("%s: on demand, but its manager keeps what its objects hold", r)
		}
		switch r { // the feeds' targets (System.startFeeds) and the kinds with timers of their own
		case "replicationcontrollers", "services", "persistentvolumeclaims", "persistentvolumes", "serviceaccounts",
			"namespaces", "resourcequotas", "events", "nodes":
			t.Errorf("%s: on demand, but its objects act on their own (feeds, timers)", r)
		}
		if _, base := e.controllerFor(r)().(control.Base); !base && !slices.Contains(onDemandControlled, r) {
			t.Errorf("%s: on demand, but it has a controller not listed in onDemandControlled", r)
		}
	}
	if !onDemand("pods") || !onDemand("configmaps") || onDemand("nodes") {
		t.Error("pods and configmaps are on demand, nodes are not")
	}
}

// An idle actor that stopped is garbage: nothing of protoactor's keeps it (and the
// object it held) alive once its manager swept again.
func TestStoppedActorsAreFreed(t *testing.T) {
	clock := newFakeClock()
	st := storeWithPods(t, clock, 5)
	s := startSystem(t, st, clock)
	clock.Advance(31 * time.Second) // dying's grace period ends: its actor goes
	eventually(t, 5*time.Second, "dying removed", func() bool { return gone(st, podKey("ns", "dying")) })
	var freed atomic.Int32
	names := []string{"p0", "p1", "p2", "p3"}
	for _, name := range names {
		runtime.AddCleanup(probe(t, s, podKey("ns", name)).self, func(n *atomic.Int32) { n.Add(1) }, &freed)
	}
	for range 3 {
		clock.Advance(DefaultIdleAfter)
		children(t, s, "pods") // after the sweep, in the manager's mailbox
	}
	eventually(t, 5*time.Second, "every pod actor stopped", func() bool { return len(children(t, s, "pods")) == 0 })
	clock.Advance(DefaultIdleAfter) // a sweep after they stopped
	children(t, s, "pods")
	eventually(t, 5*time.Second, "the stopped actors collected", func() bool {
		runtime.GC()
		return int(freed.Load()) == len(names)
	})
}
