package actors

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/actors/scheduler"
	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// startScheduling starts a system with the scheduler on two shards and a fixed seed.
func startScheduling(t testing.TB, store *persistence.Store, policy []byte) *System {
	t.Helper()
	return startSchedulingShards(t, store, policy, 2)
}

// startSchedulingShards starts a system with the scheduler on the given number of
// shards (one: the scheduler bids itself, without a shard actor) and a fixed seed.
func startSchedulingShards(t testing.TB, store *persistence.Store, policy []byte, shards int) *System {
	t.Helper()
	s, err := Start(Options{Store: store, Log: quietLog(), RequestTimeout: 10 * time.Second, Resources: testResources,
		Scheduler: true, SchedulerShards: shards, SchedulerSeed: 1, SchedulerPolicy: policy})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// startSchedulingClock starts a system whose scheduler bids itself (one shard) on
// the given clock.
func startSchedulingClock(t testing.TB, store *persistence.Store, clock Clock) *System {
	t.Helper()
	s, err := Start(Options{Store: store, Log: quietLog(), RequestTimeout: 10 * time.Second, Resources: testResources,
		Scheduler: true, SchedulerShards: 1, SchedulerSeed: 1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func create(t testing.TB, s *System, obj kruntime.Object) {
	t.Helper()
	var key persistence.Key
	switch o := obj.(type) {
	case *corev1.Node:
		o.UID = types.UID("uid-node-" + o.Name)
		key = persistence.Key{Resource: "nodes", Name: o.Name}
	case *corev1.Pod:
		o.UID = types.UID("uid-pod-" + o.Name)
		key = podKey(o.Namespace, o.Name)
	case *corev1.Service:
		o.UID = types.UID("uid-svc-" + o.Name)
		key = persistence.Key{Resource: "services", Namespace: o.Namespace, Name: o.Name}
	}
	if _, err := s.Create(context.Background(), key, obj); err != nil {
		t.Fatalf("create %v: %v", key, err)
	}
}

// boundTo returns the node a stored pod is bound to, or "".
func boundTo(t testing.TB, store *persistence.Store, name string) string {
	t.Helper()
	it, err := store.Get(podKey("default", name))
	if err != nil {
		t.Fatalf("get pod %s: %v", name, err)
	}
	return it.Object().(*corev1.Pod).Spec.NodeName
}

// failedScheduling returns the messages of the FailedScheduling events about a pod.
func failedScheduling(store *persistence.Store, pod string) []string {
	var msgs []string
	store.Snapshot("events").Ascend("default", "", func(it *persistence.Item) bool {
		ev := it.Object().(*corev1.Event)
		if ev.Reason == "FailedScheduling" && ev.InvolvedObject.Name == pod {
			msgs = append(msgs, ev.Message)
		}
		return true
	})
	return msgs
}

func TestSchedulerBinds(t *testing.T) {
	labelPolicy := []byte(`{"kind":"Policy","apiVersion":"v1",
		"predicates":[{"name":"PodFitsResources"},{"name":"RequireZone","argument":{"labelsPresence":{"labels":["zone"],"presence":true}}}],
		"priorities":[{"name":"LeastRequestedPriority","weight":1}]}`)
	tests := []struct {
		name   string
		policy []byte
		nodes  []*corev1.Node
		pod    *corev1.Pod
		want   string
	}{
		{
			name:  "the only node with room",
			nodes: []*corev1.Node{st.NewNode("small").CPU("1").Obj(), st.NewNode("big").CPU("4").Obj()},
			pod:   st.NewPod("web").CPU("2").Obj(),
			want:  "big",
		},
		{
			name: "never a not-ready or cordoned node",
			nodes: []*corev1.Node{st.NewNode("down").CPU("64").NotReady().Obj(),
				st.NewNode("cordoned").CPU("64").Unschedulable().Obj(), st.NewNode("up").CPU("1").Obj()},
			pod:  st.NewPod("web").CPU("500m").Obj(),
			want: "up",
		},
		{
			name:  "node selector",
			nodes: []*corev1.Node{st.NewNode("a").Obj(), st.NewNode("b").Labels("disk", "ssd").Obj(), st.NewNode("c").Obj()},
			pod:   st.NewPod("web").NodeSelector("disk", "ssd").Obj(),
			want:  "b",
		},
		{
			name:   "policy file with CheckNodeLabelPresence",
			policy: labelPolicy,
			nodes:  []*corev1.Node{st.NewNode("a").CPU("64").Obj(), st.NewNode("b").Labels("zone", "z1").Obj(), st.NewNode("c").CPU("64").Obj()},
			pod:    st.NewPod("web").CPU("100m").Obj(),
			want:   "b",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := openStore(t)
			s := startScheduling(t, store, tc.policy)
			for _, n := range tc.nodes {
				create(t, s, n)
			}
			create(t, s, tc.pod)
			waitFor(t, "pod bound", func() error {
				if n := boundTo(t, store, tc.pod.Name); n == "" {
					return fmt.Errorf("pod pending; events %q", failedScheduling(store, tc.pod.Name))
				}
				return nil
			})
			if got := boundTo(t, store, tc.pod.Name); got != tc.want {
				t.Fatalf("bound to %q, want %q", got, tc.want)
			}
			it, _ := store.Get(podKey("default", tc.pod.Name))
			bound := it.Object().(*corev1.Pod)
			ann := bound.Annotations[scheduler.DecisionAnnotation]
			rec, err := scheduler.DecodeDecision(ann)
			if err != nil {
				t.Fatalf("decision annotation %q: %v", ann, err)
			}
			if c := podpkg.Condition(bound, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue || c.LastTransitionTime.IsZero() {
				t.Fatalf("PodScheduled condition %+v, want True with a transition time", c)
			}
			// The scheduler follows nodes and pods on separate feeds, so a node created
			// just before the pod may not have reached it yet: the record must account
			// for exactly the nodes it saw.
			if rec.Node != tc.want || rec.Nodes < 1 || rec.Nodes > len(tc.nodes) || rec.Feasible != 1 || len(rec.Top) != 1 ||
				len(rec.Priorities) == 0 || sum(rec.Rejected) != rec.Nodes-rec.Feasible {
				t.Fatalf("decision record %s", ann)
			}
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestSchedulerUnschedulableThenBound(t *testing.T) {
	store := openStore(t)
	s := startScheduling(t, store, nil)
	create(t, s, st.NewNode("small").CPU("1").Obj())
	create(t, s, st.NewNode("down").CPU("8").NotReady().Obj())
	create(t, s, st.NewPod("web").CPU("2").Obj())
	want := "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were not ready."
	// A decision made before the scheduler saw the second node says 0/1: wait for
	// the event of one that saw both.
	waitFor(t, "FailedScheduling event", func() error {
		msgs := failedScheduling(store, "web")
		if !slices.Contains(msgs, want) {
			return fmt.Errorf("events %q, want %q", msgs, want)
		}
		return nil
	})
	if n := boundTo(t, store, "web"); n != "" {
		t.Fatalf("bound to %s with no room", n)
	}
	create(t, s, st.NewNode("big").CPU("4").Obj())
	waitFor(t, "pod bound after a node came", func() error {
		if n := boundTo(t, store, "web"); n != "big" {
			return fmt.Errorf("bound to %q", n)
		}
		return nil
	})
}

// TestSchedulerBindsTheNewestVersion: a pod waiting for room is changed (a label
// added); once a node comes it is bound, and the binding keeps the change: the
// scheduler binds the version its input last gave, or reads the store again when
// the binding's precondition finds that version superseded.
func TestSchedulerBindsTheNewestVersion(t *testing.T) {
	store := openStore(t)
	s := startScheduling(t, store, nil)
	create(t, s, st.NewNode("small").CPU("1").Obj())
	create(t, s, st.NewPod("web").CPU("2").Obj())
	waitFor(t, "FailedScheduling event", func() error {
		if len(failedScheduling(store, "web")) == 0 {
			return fmt.Errorf("no event yet")
		}
		return nil
	})
	it, err := store.Get(podKey("default", "web"))
	if err != nil {
		t.Fatal(err)
	}
	changed := it.Object().(*corev1.Pod).DeepCopy()
	changed.Labels = map[string]string{"tier": "front"}
	if _, err := s.Update(context.Background(), podKey("default", "web"), changed, command.Preconditions{}); err != nil {
		t.Fatal(err)
	}
	create(t, s, st.NewNode("big").CPU("4").Obj())
	waitFor(t, "pod bound after a node came", func() error {
		if n := boundTo(t, store, "web"); n != "big" {
			return fmt.Errorf("bound to %q", n)
		}
		return nil
	})
	it, _ = store.Get(podKey("default", "web"))
	if got := it.Object().(*corev1.Pod).Labels["tier"]; got != "front" {
		t.Fatalf("the bound pod lost the change: labels %v", it.Object().(*corev1.Pod).Labels)
	}
}

func TestSchedulerHostPorts(t *testing.T) {
	store := openStore(t)
	s := startScheduling(t, store, nil)
	create(t, s, st.NewNode("a").Obj())
	create(t, s, st.NewNode("b").Obj())
	for _, name := range []string{"p1", "p2", "p3"} {
		create(t, s, st.NewPod(name).HostPort(80).Obj())
	}
	waitFor(t, "two bound, one refused by both nodes", func() error {
		refused := slices.ContainsFunc(failedScheduling(store, "p3"), func(m string) bool {
			return strings.Contains(m, "2 node(s) didn't have free ports")
		})
		if boundTo(t, store, "p1") == "" || boundTo(t, store, "p2") == "" || !refused {
			return fmt.Errorf("p1 %q p2 %q p3 events %q", boundTo(t, store, "p1"), boundTo(t, store, "p2"), failedScheduling(store, "p3"))
		}
		return nil
	})
	if a, b := boundTo(t, store, "p1"), boundTo(t, store, "p2"); a == b {
		t.Fatalf("both pods with host port 80 on %s", a)
	}
}

// TestSchedulerNoOvercommit creates many pods with random requests at once (one
// store transaction) and checks that no node ends up with more than it offers.
func TestSchedulerNoOvercommit(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			store := openStore(t)
			s := startScheduling(t, store, nil)
			for i := 0; i < 6; i++ {
				create(t, s, st.NewNode(fmt.Sprintf("n%d", i)).CPU(fmt.Sprint(1+r.Intn(4))).Mem(fmt.Sprintf("%dGi", 1+r.Intn(8))).Obj())
			}
			var cmds []persistence.Command
			for i := 0; i < 80; i++ {
				p := st.NewPod(fmt.Sprintf("p%02d", i)).CPU(fmt.Sprintf("%dm", 100+r.Intn(900))).Mem(fmt.Sprintf("%dMi", 64+r.Intn(1024))).Obj()
				p.UID = types.UID(fmt.Sprintf("uid-%d", i))
				cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("default", p.Name), Object: p})
			}
			if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "every pod bound or refused", func() error {
				for _, c := range cmds {
					if boundTo(t, store, c.Key.Name) == "" && len(failedScheduling(store, c.Key.Name)) == 0 {
						return fmt.Errorf("%s undecided", c.Key.Name)
					}
				}
				return nil
			})
			used := map[string][2]int64{}
			for _, c := range cmds {
				it, _ := store.Get(c.Key)
				p := it.Object().(*corev1.Pod)
				if p.Spec.NodeName == "" {
					continue
				}
				u := used[p.Spec.NodeName]
				req := p.Spec.Containers[0].Resources.Requests
				u[0] += req.Cpu().MilliValue()
				u[1] += req.Memory().Value()
				used[p.Spec.NodeName] = u
			}
			if len(used) == 0 {
				t.Fatal("nothing bound")
			}
			for name, u := range used {
				it, _ := store.Get(persistence.Key{Resource: "nodes", Name: name})
				capacity := it.Object().(*corev1.Node).Status.Capacity
				if u[0] > capacity.Cpu().MilliValue() || u[1] > capacity.Memory().Value() {
					t.Fatalf("node %s overcommitted: %dm cpu of %s, %d memory of %s", name, u[0], capacity.Cpu(), u[1], capacity.Memory())
				}
			}
		})
	}
}

// TestSchedulerSpread: identical pods of a service, or of a replication controller
// without a service (which creates its pods itself), end within one pod of each
// other on identical nodes.
func TestSchedulerSpread(t *testing.T) {
	// More pods than the scheduler decides in one turn with one shard
	// (localDecisions), so that its runs follow each other.
	const nodes, pods = 7, 3*localDecisions + 5
	for _, tc := range []struct {
		group  string
		shards int
	}{{"service", 1}, {"service", 2}, {"replicationcontroller", 1}, {"replicationcontroller", 2}} {
		group := tc.group
		t.Run(fmt.Sprintf("%s/%d-shards", group, tc.shards), func(t *testing.T) {
			store := openStore(t)
			s := startSchedulingShards(t, store, nil, tc.shards)
			for i := 0; i < nodes; i++ {
				create(t, s, st.NewNode(fmt.Sprintf("n%d", i)).CPU("32").Mem("64Gi").Pods(110).Obj())
			}
			if group == "service" {
				create(t, s, st.NewService("web", "app", "web"))
				var cmds []persistence.Command
				for i := 0; i < pods; i++ {
					p := st.NewPod(fmt.Sprintf("web-%03d", i)).Labels("app", "web").CPU("100m").Mem("128Mi").Obj()
					p.UID = types.UID(fmt.Sprintf("uid-%d", i))
					cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("default", p.Name), Object: p})
				}
				if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
					t.Fatal(err)
				}
			} else {
				rc := st.NewRC("web", "app", "web")
				*rc.Spec.Replicas = pods
				rc.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: st.NewPod("x").CPU("100m").Mem("128Mi").Obj().Spec.Containers[0].Resources.Requests}}}
				rc.UID = "uid-rc-web"
				if _, err := s.Create(context.Background(), persistence.Key{Resource: "replicationcontrollers", Namespace: "default", Name: "web"}, rc); err != nil {
					t.Fatal(err)
				}
			}
			per := map[string]int{}
			waitFor(t, "every pod bound", func() error {
				clear(per)
				total := 0
				var pending []string
				store.Snapshot("pods").Ascend("default", "", func(it *persistence.Item) bool {
					p := it.Object().(*corev1.Pod)
					total++
					if p.Spec.NodeName == "" {
						pending = append(pending, p.Name)
					}
					per[p.Spec.NodeName]++
					return true
				})
				if total != pods || len(pending) > 0 {
					return fmt.Errorf("%d pods, pending %v", total, pending)
				}
				return nil
			})
			lo, hi := pods, 0
			for i := 0; i < nodes; i++ {
				n := per[fmt.Sprintf("n%d", i)]
				lo, hi = min(lo, n), max(hi, n)
			}
			if hi-lo > 1 {
				t.Fatalf("spread %d..%d: %v", lo, hi, per)
			}
		})
	}
}

// TestSchedulerBindingConflict: a pod bound by someone else between the decision and
// the binding stays where it was put.
func TestSchedulerPodBoundElsewhere(t *testing.T) {
	store := openStore(t)
	s := startScheduling(t, store, nil)
	create(t, s, st.NewNode("a").Obj())
	p := st.NewPod("web").Node("a").Obj()
	create(t, s, p)
	q := st.NewPod("db").Obj()
	q.Spec.SchedulerName = "my-scheduler"
	create(t, s, q)
	create(t, s, st.NewPod("sentinel").Obj())
	waitFor(t, "sentinel bound", func() error {
		if boundTo(t, store, "sentinel") == "" {
			return fmt.Errorf("pending")
		}
		return nil
	})
	if n := boundTo(t, store, "db"); n != "" {
		t.Fatalf("pod of another scheduler bound to %s", n)
	}
	it, _ := store.Get(podKey("default", "web"))
	if _, ok := it.Object().(*corev1.Pod).Annotations[scheduler.DecisionAnnotation]; ok {
		t.Fatal("a bound pod was scheduled again")
	}
}

// TestSchedulerUnschedulableEventsBounded: 500 pods and no node. Their
// FailedScheduling events are one Event object per pod, bumped rather than
// recreated, and their writes draw on the scheduler's event budget: with the clock
// standing still exactly EventBurst are written; as it moves, at most
// EventBurst + EventRate per second of it, until every pod has its event. The first
// attempts of all 500 pods, and their retries, cost far fewer writes than pods. Once
// a node appears every pod is bound.
func TestSchedulerUnschedulableEventsBounded(t *testing.T) {
	const pods = 500
	clock := newFakeClock()
	store := openStore(t)
	s := startSchedulingClock(t, store, clock)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch, err := store.Watch(ctx, "events", "", store.Revision())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var writes, creates []int64 // revisions of the FailedScheduling writes
	var seen int64              // the last revision of an event the watcher counted
	go func() {
		for {
			evs, err := watch.Next(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			for _, ev := range evs {
				seen = max(seen, ev.Item.Revision)
				if e, ok := ev.Item.Object().(*corev1.Event); ok && e.Reason == "FailedScheduling" {
					writes = append(writes, ev.Item.Revision)
					if ev.Type == persistence.Added {
						creates = append(creates, ev.Item.Revision)
					}
				}
			}
			mu.Unlock()
		}
	}()
	// counts returns the writes and creates up to revision upTo (0: all).
	counts := func(upTo int64) (int, int) {
		mu.Lock()
		defer mu.Unlock()
		n := func(revs []int64) int {
			k := 0
			for _, r := range revs {
				if upTo == 0 || r <= upTo {
					k++
				}
			}
			return k
		}
		return n(writes), n(creates)
	}

	var cmds []persistence.Command
	for i := 0; i < pods; i++ {
		p := st.NewPod(fmt.Sprintf("p%03d", i)).CPU("100m").Mem("64Mi").Obj()
		p.UID = types.UID(fmt.Sprintf("uid-%d", i))
		cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("default", p.Name), Object: p})
	}
	start := clock.Now()
	if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first burst of events", func() error {
		if w, _ := counts(0); w < scheduler.EventBurst {
			return fmt.Errorf("%d event writes", w)
		}
		return nil
	})
	if w, _ := counts(0); w != scheduler.EventBurst {
		t.Fatalf("%d event writes with the clock still, want the burst, %d", w, scheduler.EventBurst)
	}

	// Move the clock a second per look until every pod has its event.
	waitFor(t, "a FailedScheduling event for every pod", func() error {
		with := 0
		store.Snapshot("events").Ascend("default", "", func(it *persistence.Item) bool {
			if it.Object().(*corev1.Event).Reason == "FailedScheduling" {
				with++
			}
			return true
		})
		if with < pods {
			clock.Advance(time.Second)
			return fmt.Errorf("%d pods with an event", with)
		}
		return nil
	})
	elapsed := clock.Now().Sub(start)
	occurrences := 0
	events := map[string]int{}
	var last int64
	store.Snapshot("events").Ascend("default", "", func(it *persistence.Item) bool {
		if e := it.Object().(*corev1.Event); e.Reason == "FailedScheduling" {
			events[e.InvolvedObject.Name]++
			occurrences += int(e.Count)
			last = max(last, it.Revision)
		}
		return true
	})
	waitFor(t, "the watcher to count every write seen", func() error {
		mu.Lock()
		defer mu.Unlock()
		if seen < last {
			return fmt.Errorf("counted up to revision %d of %d", seen, last)
		}
		return nil
	})
	// The writes up to the snapshot's last one (the budget may write more meanwhile).
	w, c := counts(last)
	t.Logf("%v of fake time: %d event writes (%d creates) for %d occurrences of %d pods", elapsed, w, c, occurrences, pods)
	if limit := scheduler.EventBurst + scheduler.EventRate*elapsed.Seconds(); float64(w) > limit {
		t.Fatalf("%d event writes in %v, more than the budget's %g", w, elapsed, limit)
	}
	if len(events) != pods || c != pods {
		t.Fatalf("%d pods with events, %d creates; want one Event object per pod, %d", len(events), c, pods)
	}
	for name, n := range events {
		if n != 1 {
			t.Fatalf("pod %s has %d FailedScheduling events, want 1 (bumped)", name, n)
		}
	}
	if occurrences < w {
		t.Fatalf("%d occurrences counted for %d writes", occurrences, w)
	}

	create(t, s, st.NewNode("big").CPU("64").Mem("64Gi").Pods(1000).Obj())
	waitFor(t, "every pod bound once a node came", func() error {
		pending := 0
		store.Snapshot("pods").Ascend("default", "", func(it *persistence.Item) bool {
			if it.Object().(*corev1.Pod).Spec.NodeName == "" {
				pending++
			}
			return true
		})
		if pending > 0 {
			return fmt.Errorf("%d pending", pending)
		}
		return nil
	})
}

// TestSchedulerScheduledEvents: by default a bound pod gets a Scheduled event from
// default-scheduler naming the pod and its node, as v1.0's kube-scheduler words it
// (through the event budget, which has room for it here).
func TestSchedulerScheduledEvents(t *testing.T) {
	store := openStore(t)
	s, err := Start(Options{Store: store, Log: quietLog(), RequestTimeout: 10 * time.Second, Resources: testResources,
		Scheduler: true, SchedulerShards: 1, SchedulerSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	create(t, s, st.NewNode("a").Obj())
	create(t, s, st.NewPod("web").Obj())
	waitFor(t, "a Scheduled event", func() error {
		var msgs []string
		store.Snapshot("events").Ascend("default", "", func(it *persistence.Item) bool {
			if e := it.Object().(*corev1.Event); e.Reason == "Scheduled" && e.InvolvedObject.Name == "web" {
				msgs = append(msgs, e.Source.Component+": "+e.Message)
			}
			return true
		})
		if !slices.Equal(msgs, []string{"default-scheduler: Successfully assigned web to a"}) {
			return fmt.Errorf("Scheduled events %q", msgs)
		}
		return nil
	})
}

// TestSchedulerNoNodeWaitsForOne: with no node, a pod's backoff ending does not start
// another round certain to fail; the first node to come retries it.
func TestSchedulerNoNodeWaitsForOne(t *testing.T) {
	clock := newFakeClock()
	store := openStore(t)
	s := startSchedulingClock(t, store, clock)
	failed := func(pod string) func() error {
		return func() error {
			if len(failedScheduling(store, pod)) == 0 {
				return fmt.Errorf("no FailedScheduling event for %s", pod)
			}
			return nil
		}
	}
	create(t, s, st.NewPod("first").CPU("100m").Obj())
	waitFor(t, "the first pod's failed round", failed("first"))
	// Past several backoff steps: the retry is due (its timer fires now), and is
	// handled before the second pod comes in, whose failed round is then the second.
	clock.Advance(10 * time.Second)
	create(t, s, st.NewPod("second").CPU("100m").Obj())
	waitFor(t, "the second pod's failed round", failed("second"))
	if got := s.Stats().Scheduler.Unschedulable; got != 2 {
		t.Fatalf("%d failed rounds, want 2 (one per pod, no retry with no node)", got)
	}
	create(t, s, st.NewNode("n1").CPU("4").Obj())
	waitFor(t, "both pods bound once a node came", func() error {
		if a, b := boundTo(t, store, "first"), boundTo(t, store, "second"); a != "n1" || b != "n1" {
			return fmt.Errorf("bound to %q and %q", a, b)
		}
		return nil
	})
}
