package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/actors/control"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/namespace"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

func rvOf(t testing.TB, obj interface{}) int64 {
	t.Helper()
	p, ok := obj.(*corev1.Pod)
	if !ok {
		t.Fatalf("not a pod: %T", obj)
	}
	rv, err := strconv.ParseInt(p.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", p.ResourceVersion, err)
	}
	return rv
}

func TestWriteSemantics(t *testing.T) {
	ctx := WithTrace(context.Background(), "t-1")
	tests := []struct {
		name string
		// act runs against a system holding pod default/a (unbound, uid "uid-default-a") stored at revision rv.
		act     func(s *System, rv int64) error
		wantErr error
		// check, when set, looks at the store afterwards.
		check func(t *testing.T, st *persistence.Store, rv int64)
	}{
		{
			name: "create existing",
			act: func(s *System, _ int64) error {
				_, err := s.Create(ctx, podKey("default", "a"), newPod("default", "a").obj())
				return err
			},
			wantErr: persistence.ErrAlreadyExists,
		},
		{
			name: "create new",
			act: func(s *System, _ int64) error {
				_, err := s.Create(ctx, podKey("default", "b"), newPod("default", "b").obj())
				return err
			},
			check: func(t *testing.T, st *persistence.Store, _ int64) {
				if gone(st, podKey("default", "b")) {
					t.Fatal("created pod not stored")
				}
			},
		},
		{
			name: "update",
			act: func(s *System, rv int64) error {
				_, err := s.Update(ctx, podKey("default", "a"), newPod("default", "a").image("redis").obj(), command.Preconditions{ResourceVersion: rv})
				return err
			},
			check: func(t *testing.T, st *persistence.Store, rv int64) {
				it, err := st.Get(podKey("default", "a"))
				if err != nil || it.Object().(*corev1.Pod).Spec.Containers[0].Image != "redis" || it.Revision <= rv {
					t.Fatalf("update not stored: %v %+v", err, it)
				}
			},
		},
		{
			name: "update missing",
			act: func(s *System, _ int64) error {
				_, err := s.Update(ctx, podKey("default", "zz"), newPod("default", "zz").obj(), command.Preconditions{})
				return err
			},
			wantErr: persistence.ErrNotFound,
		},
		{
			name: "update stale resourceVersion",
			act: func(s *System, rv int64) error {
				_, err := s.Update(ctx, podKey("default", "a"), newPod("default", "a").obj(), command.Preconditions{ResourceVersion: rv + 100})
				return err
			},
			wantErr: persistence.ErrConflict,
		},
		{
			name: "update wrong uid precondition",
			act: func(s *System, _ int64) error {
				_, err := s.Update(ctx, podKey("default", "a"), newPod("default", "a").obj(), command.Preconditions{UID: "other"})
				return err
			},
			wantErr: persistence.ErrConflict,
		},
		{
			name: "update changes uid",
			act: func(s *System, _ int64) error {
				_, err := s.Update(ctx, podKey("default", "a"), newPod("default", "a").uid("other").obj(), command.Preconditions{})
				return err
			},
			wantErr: persistence.ErrConflict,
		},
		{
			name: "delete",
			act: func(s *System, rv int64) error {
				obj, isGone, err := s.Delete(ctx, podKey("default", "a"), DeleteOptions{Preconditions: command.Preconditions{ResourceVersion: rv, UID: "uid-default-a"}})
				if err == nil && (!isGone || obj == nil) {
					return fmt.Errorf("delete: gone %v obj %v", isGone, obj)
				}
				return err
			},
			check: func(t *testing.T, st *persistence.Store, _ int64) {
				if !gone(st, podKey("default", "a")) {
					t.Fatal("deleted pod still stored")
				}
			},
		},
		{
			name: "delete missing",
			act: func(s *System, _ int64) error {
				_, _, err := s.Delete(ctx, podKey("default", "zz"), DeleteOptions{})
				return err
			},
			wantErr: persistence.ErrNotFound,
		},
		{
			name: "delete wrong uid",
			act: func(s *System, _ int64) error {
				_, _, err := s.Delete(ctx, podKey("default", "a"), DeleteOptions{Preconditions: command.Preconditions{UID: "other"}})
				return err
			},
			wantErr: persistence.ErrConflict,
			check: func(t *testing.T, st *persistence.Store, _ int64) {
				if gone(st, podKey("default", "a")) {
					t.Fatal("failed delete removed the pod")
				}
			},
		},
		{
			name: "delete stale resourceVersion",
			act: func(s *System, rv int64) error {
				_, _, err := s.Delete(ctx, podKey("default", "a"), DeleteOptions{Preconditions: command.Preconditions{ResourceVersion: rv + 1}})
				return err
			},
			wantErr: persistence.ErrConflict,
		},
		{
			name: "unknown resource",
			act: func(s *System, _ int64) error {
				_, err := s.Create(ctx, persistence.Key{Resource: "widgets", Name: "w"}, newPod("", "w").obj())
				return err
			},
			wantErr: ErrUnknownResource,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			s := startSystem(t, st, nil)
			created, err := s.Create(ctx, podKey("default", "a"), newPod("default", "a").obj())
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			rv := rvOf(t, created)
			err = tc.act(s, rv)
			if tc.wantErr == nil && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, st, rv)
			}
		})
	}
}

func TestConcurrentCreates(t *testing.T) {
	const clients, each = 64, 20
	tests := []struct {
		name     string
		sameName bool
	}{
		{name: "distinct names all land"},
		{name: "same name exactly one wins", sameName: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			s := startSystem(t, st, nil)
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok, exists := map[string]int{}, 0
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						name := fmt.Sprintf("p-%d-%d", c, i)
						if tc.sameName {
							name = fmt.Sprintf("p-%d", i)
						}
						_, err := s.Create(context.Background(), podKey("ns", name), newPod("ns", name).obj())
						mu.Lock()
						switch {
						case err == nil:
							ok[name]++
						case errors.Is(err, persistence.ErrAlreadyExists):
							exists++
						default:
							t.Errorf("create %s: %v", name, err)
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			wantNames := clients * each
			if tc.sameName {
				wantNames = each
			}
			if len(ok) != wantNames || exists != clients*each-wantNames {
				t.Fatalf("%d names created, %d already-exists; want %d and %d", len(ok), exists, wantNames, clients*each-wantNames)
			}
			for name, n := range ok {
				if n != 1 {
					t.Fatalf("%s created %d times", name, n)
				}
			}
			if n := st.Snapshot("pods").Len(); n != wantNames {
				t.Fatalf("store holds %d pods, want %d", n, wantNames)
			}
		})
	}
}

// TestCreateAfterDelete drives the manager/child protocol: a create that reaches the
// manager before or after the deleted object's actor reports idle is never lost or
// duplicated.
func TestCreateAfterDelete(t *testing.T) {
	st := openStore(t)
	s := startSystem(t, st, nil)
	ctx := context.Background()
	k := podKey("ns", "churn")

	t.Run("sequential", func(t *testing.T) {
		for i := range 300 {
			if _, err := s.Create(ctx, k, newPod("ns", "churn").obj()); err != nil {
				t.Fatalf("round %d create: %v", i, err)
			}
			if _, isGone, err := s.Delete(ctx, k, DeleteOptions{}); err != nil || !isGone {
				t.Fatalf("round %d delete: gone %v, %v", i, isGone, err)
			}
		}
		if !gone(st, k) {
			t.Fatal("pod stored after last delete")
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		for i := range 200 {
			if _, err := s.Create(ctx, k, newPod("ns", "churn").obj()); err != nil {
				t.Fatalf("round %d create: %v", i, err)
			}
			var wg sync.WaitGroup
			var createErr, deleteErr error
			wg.Add(2)
			go func() { defer wg.Done(); _, _, deleteErr = s.Delete(ctx, k, DeleteOptions{}) }()
			go func() { defer wg.Done(); _, createErr = s.Create(ctx, k, newPod("ns", "churn").obj()) }()
			wg.Wait()
			if deleteErr != nil {
				t.Fatalf("round %d delete: %v", i, deleteErr)
			}
			switch {
			case createErr == nil: // ran after the delete: must be stored
				if gone(st, k) {
					t.Fatalf("round %d: acknowledged create lost", i)
				}
				if _, _, err := s.Delete(ctx, k, DeleteOptions{}); err != nil {
					t.Fatalf("round %d cleanup: %v", i, err)
				}
			case errors.Is(createErr, persistence.ErrAlreadyExists): // ran before the delete
				if !gone(st, k) {
					t.Fatalf("round %d: pod stored after its delete", i)
				}
			default:
				t.Fatalf("round %d create: %v", i, createErr)
			}
		}
	})
}

func TestRestartAfterPanic(t *testing.T) {
	st := openStore(t)
	s := startSystem(t, st, nil)
	ctx := context.Background()
	k := podKey("ns", "fragile")
	if _, err := s.Create(ctx, k, newPod("ns", "fragile").obj()); err != nil {
		t.Fatal(err)
	}
	before := probe(t, s, k)
	for round := 1; round <= 3; round++ {
		if err := s.InjectPanic(ctx, k); err != nil {
			t.Fatalf("inject panic: %v", err)
		}
		eventually(t, 5*time.Second, "restart", func() bool { return probe(t, s, k).restarts == round })
		p := probe(t, s, k)
		it, err := st.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if !p.pid.Equal(before.pid) || p.revision != it.Revision {
			t.Fatalf("after restart pid %v rev %d; want pid %v rev %d", p.pid, p.revision, before.pid, it.Revision)
		}
		// Keeps serving writes from the reloaded state: a precondition on the stored
		// revision holds, a create is refused.
		updated, err := s.Update(ctx, k, newPod("ns", "fragile").image(fmt.Sprintf("img-%d", round)).obj(), command.Preconditions{ResourceVersion: it.Revision})
		if err != nil {
			t.Fatalf("update after restart: %v", err)
		}
		if _, err := s.Create(ctx, k, newPod("ns", "fragile").obj()); !errors.Is(err, persistence.ErrAlreadyExists) {
			t.Fatalf("create after restart: %v", err)
		}
		it, _ = st.Get(k)
		if it.Revision != rvOf(t, updated) || it.Object().(*corev1.Pod).Spec.Containers[0].Image != fmt.Sprintf("img-%d", round) {
			t.Fatalf("stored %+v, answered %+v", it.Object(), updated)
		}
	}
	if err := s.InjectPanic(ctx, podKey("ns", "nobody")); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("inject panic into missing object: %v", err)
	}
}

func TestReloadAtStart(t *testing.T) {
	st := openStore(t)
	clock := newFakeClock()
	ctx := context.Background()
	// Objects written before the system starts (by an earlier run).
	stored := newPod("ns", "old").obj()
	terminating := newPod("ns", "dying").node("n1").obj()
	ts := clock.Now().Add(-time.Second)
	terminating.DeletionTimestamp = ptrTime(ts)
	terminating.DeletionGracePeriodSeconds = ptr(int64(30))
	_, objs, err := st.Apply(ctx,
		persistence.Command{Op: persistence.OpCreate, Key: podKey("ns", "old"), Object: stored},
		persistence.Command{Op: persistence.OpCreate, Key: podKey("ns", "dying"), Object: terminating})
	if err != nil {
		t.Fatal(err)
	}
	rv := rvOf(t, objs[0])

	s := startSystem(t, st, clock)
	if _, err := s.Create(ctx, podKey("ns", "old"), newPod("ns", "old").obj()); !errors.Is(err, persistence.ErrAlreadyExists) {
		t.Fatalf("create over loaded object: %v", err)
	}
	if _, err := s.Update(ctx, podKey("ns", "old"), newPod("ns", "old").image("redis").obj(), command.Preconditions{ResourceVersion: rv}); err != nil {
		t.Fatalf("update loaded object: %v", err)
	}
	// The loaded terminating pod's grace period has passed: its actor removes it.
	eventually(t, 5*time.Second, "expired pod removed", func() bool { return gone(st, podKey("ns", "dying")) })
}

func TestPodGracefulDeletion(t *testing.T) {
	type del struct {
		grace     *int64
		wantGone  bool
		wantGrace int64 // when not gone: deletionGracePeriodSeconds
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		deletes []del
	}{
		{name: "unbound pod goes at once", pod: newPod("ns", "p").obj(), deletes: []del{{wantGone: true}}},
		{name: "unbound pod ignores grace", pod: newPod("ns", "p").obj(), deletes: []del{{grace: ptr(int64(10)), wantGone: true}}},
		{name: "bound pod, grace 0", pod: newPod("ns", "p").node("n1").obj(), deletes: []del{{grace: ptr(int64(0)), wantGone: true}}},
		{name: "bound pod, default grace", pod: newPod("ns", "p").node("n1").obj(), deletes: []del{{wantGrace: 30}}},
		{name: "bound pod, spec grace", pod: newPod("ns", "p").node("n1").grace(12).obj(), deletes: []del{{wantGrace: 12}}},
		{
			name: "second delete shortens",
			pod:  newPod("ns", "p").node("n1").obj(),
			deletes: []del{
				{grace: ptr(int64(20)), wantGrace: 20},
				{grace: ptr(int64(5)), wantGrace: 5},
				{grace: ptr(int64(60)), wantGrace: 5}, // never lengthens
			},
		},
		{
			name:    "node agent deletes early with grace 0",
			pod:     newPod("ns", "p").node("n1").obj(),
			deletes: []del{{wantGrace: 30}, {grace: ptr(int64(0)), wantGone: true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			clock := newFakeClock()
			s := startSystem(t, st, clock)
			ctx := context.Background()
			k := podKey("ns", "p")
			if _, err := s.Create(ctx, k, tc.pod); err != nil {
				t.Fatal(err)
			}
			for i, d := range tc.deletes {
				obj, isGone, err := s.Delete(ctx, k, DeleteOptions{GracePeriodSeconds: d.grace})
				if err != nil {
					t.Fatalf("delete %d: %v", i, err)
				}
				if isGone != d.wantGone || gone(st, k) != d.wantGone {
					t.Fatalf("delete %d: gone %v (stored gone %v), want %v", i, isGone, gone(st, k), d.wantGone)
				}
				if d.wantGone {
					continue
				}
				p := obj.(*corev1.Pod)
				want := clock.Now().Add(time.Duration(d.wantGrace) * time.Second)
				if p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != d.wantGrace ||
					p.DeletionTimestamp == nil || !p.DeletionTimestamp.Time.Equal(want) {
					t.Fatalf("delete %d: deletion %v grace %v, want %v grace %d", i, p.DeletionTimestamp, p.DeletionGracePeriodSeconds, want, d.wantGrace)
				}
			}
			if gone(st, k) {
				return
			}
			// Before the grace period ends the pod stays; after it, its actor removes it.
			clock.Advance(time.Second)
			if _, err := s.Update(ctx, k, newPod("ns", "p").node("n1").obj(), command.Preconditions{}); err != nil {
				t.Fatalf("status-like update during grace: %v", err)
			}
			if gone(st, k) {
				t.Fatal("pod removed before its grace period ended")
			}
			clock.Advance(time.Minute)
			eventually(t, 5*time.Second, "pod removed after grace", func() bool { return gone(st, k) })
		})
	}
}

func TestFinalizers(t *testing.T) {
	st := openStore(t)
	clock := newFakeClock()
	s := startSystem(t, st, clock)
	ctx := context.Background()
	k := podKey("ns", "held")
	if _, err := s.Create(ctx, k, newPod("ns", "held").finalizer("example.com/hold").obj()); err != nil {
		t.Fatal(err)
	}
	obj, isGone, err := s.Delete(ctx, k, DeleteOptions{})
	if err != nil || isGone || obj.(*corev1.Pod).DeletionTimestamp == nil {
		t.Fatalf("delete with finalizer: gone %v err %v obj %v", isGone, err, obj)
	}
	// An update keeping the finalizer keeps the object, and cannot clear the deletion.
	kept, err := s.Update(ctx, k, newPod("ns", "held").finalizer("example.com/hold").image("redis").obj(), command.Preconditions{})
	if err != nil || kept.(*corev1.Pod).DeletionTimestamp == nil || gone(st, k) {
		t.Fatalf("update keeping finalizer: %v %v", err, kept)
	}
	// Removing the last finalizer deletes it.
	if _, err := s.Update(ctx, k, newPod("ns", "held").obj(), command.Preconditions{}); err != nil {
		t.Fatalf("update removing finalizer: %v", err)
	}
	if !gone(st, k) {
		t.Fatal("object stored after its last finalizer was removed")
	}
	// And the name is free again.
	if _, err := s.Create(ctx, k, newPod("ns", "held").obj()); err != nil {
		t.Fatalf("create after finalized delete: %v", err)
	}
}

func TestNamespaceDeletion(t *testing.T) {
	st := openStore(t)
	clock := newFakeClock()
	s := startSystem(t, st, clock)
	ctx := WithTrace(context.Background(), "ns-delete")
	nsKey := persistence.Key{Resource: "namespaces", Name: "team"}
	if _, err := s.Create(ctx, nsKey, nsObj("team")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, persistence.Key{Resource: "namespaces", Name: "other"}, nsObj("other")); err != nil {
		t.Fatal(err)
	}
	var contents []persistence.Key
	for i := range 20 {
		name := fmt.Sprintf("p%d", i)
		if _, err := s.Create(ctx, podKey("team", name), newPod("team", name).obj()); err != nil {
			t.Fatal(err)
		}
		contents = append(contents, podKey("team", name))
	}
	bound := podKey("team", "bound")
	if _, err := s.Create(ctx, bound, newPod("team", "bound").node("n1").obj()); err != nil {
		t.Fatal(err)
	}
	contents = append(contents, bound)
	svc := &corev1.Service{}
	svc.Name, svc.Namespace, svc.UID = "web", "team", "uid-svc"
	svcKey := persistence.Key{Resource: "services", Namespace: "team", Name: "web"}
	if _, err := s.Create(ctx, svcKey, svc); err != nil {
		t.Fatal(err)
	}
	contents = append(contents, svcKey)
	bystander := podKey("other", "p0")
	if _, err := s.Create(ctx, bystander, newPod("other", "p0").obj()); err != nil {
		t.Fatal(err)
	}

	obj, isGone, err := s.Delete(ctx, nsKey, DeleteOptions{})
	if err != nil || isGone {
		t.Fatalf("delete namespace: gone %v, %v", isGone, err)
	}
	if ns := obj.(*corev1.Namespace); ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Fatalf("namespace not terminating: %+v", ns.Status)
	}
	// Unbound pods and the service go at once; the bound pod waits for its grace.
	for _, k := range contents[:20] {
		eventually(t, 5*time.Second, "content removed", func() bool { return gone(st, k) })
	}
	eventually(t, 5*time.Second, "service removed", func() bool { return gone(st, svcKey) })
	if gone(st, nsKey) || gone(st, bound) {
		t.Fatal("namespace or bound pod removed before the pod's grace period")
	}
	clock.Advance(time.Minute)
	eventually(t, 5*time.Second, "bound pod removed", func() bool { return gone(st, bound) })
	// The namespace looks again every RecheckInterval of its clock; a recheck that ran
	// before the pod was gone waits for the clock to move on.
	eventually(t, 5*time.Second, "namespace removed", func() bool {
		clock.Advance(namespace.RecheckInterval)
		return gone(st, nsKey)
	})
	if gone(st, bystander) {
		t.Fatal("pod of another namespace removed")
	}
	// The namespace's name is free again.
	if _, err := s.Create(ctx, nsKey, nsObj("team")); err != nil {
		t.Fatalf("recreate namespace: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	st := openStore(t)
	s := startSystem(t, st, nil)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := s.Create(ctx, podKey("ns", "late"), newPod("ns", "late").obj())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired context: %v", err)
	}
}

func TestStopLeavesNoGoroutines(t *testing.T) {
	base := runtimeNumGoroutine()
	st, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject})
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock()
	s, err := Start(Options{Store: st, Log: quietLog(), Clock: clock, Resources: testResources})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 50 {
		name := fmt.Sprintf("p%d", i)
		if _, err := s.Create(ctx, podKey("ns", name), newPod("ns", name).node("n1").obj()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Delete(ctx, podKey("ns", name), DeleteOptions{}); err != nil { // leaves grace timers
			t.Fatal(err)
		}
	}
	s.Stop()
	s.Stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "goroutines to end", func() bool { return runtimeNumGoroutine() <= base })
}

// Every kind the actors treat specially is a stored kind of the table of kinds, and
// every stored kind gets a manager by default.
func TestControllersNameStoredKinds(t *testing.T) {
	e := &env{}
	for _, name := range controlled {
		if r, ok := kinds.Lookup(name); !ok || !r.Stored {
			t.Errorf("controller for %q, which is not a stored kind of the table", name)
		}
		if _, base := e.controllerFor(name)().(control.Base); base {
			t.Errorf("%q is listed as controlled but gets the base controller", name)
		}
	}
	for _, name := range kinds.Stored() {
		if _, base := e.controllerFor(name)().(control.Base); !base && !slices.Contains(controlled, name) {
			t.Errorf("%q has a controller but is not listed as controlled", name)
		}
	}
	if !slices.Equal(DefaultResources, kinds.Stored()) {
		t.Errorf("DefaultResources = %v, want the table's stored kinds %v", DefaultResources, kinds.Stored())
	}
}
