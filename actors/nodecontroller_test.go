package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// openControllerStore is openStore that also stores endpoints.
func openControllerStore(t testing.TB) *persistence.Store {
	t.Helper()
	st, err := persistence.Open(persistence.Options{InMemory: true, NewObject: func(res string) (kruntime.Object, error) {
		if res == "endpoints" {
			return &corev1.Endpoints{}, nil
		}
		return newObject(res)
	}})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// startControllers starts a system with the controllers' kinds and options.
func startControllers(t testing.TB, st *persistence.Store, clock Clock, nodes NodeOptions, svcs ServiceOptions) *System {
	t.Helper()
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Clock: clock, Nodes: nodes, Services: svcs,
		Resources:  append(append([]string(nil), testResources...), "endpoints"),
		SyncPacing: -1}) // forceSync relies on a resync being handled in mailbox order
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// forceSync makes the object's actor sync once more and waits until it has: the
// resync queues a syncNow, which is handled before the second probe.
func forceSync(t testing.TB, s *System, k persistence.Key) {
	t.Helper()
	s.env.root.Send(s.env.managers[k.Resource], &resyncRequest{envelope{trace: "test", key: k}})
	probe(t, s, k)
	probe(t, s, k)
}

// testNodeOptions: the 1.0 durations and one eviction a minute.
func testNodeOptions() NodeOptions {
	cfg := node.DefaultConfig()
	cfg.DeletingPodsQPS, cfg.DeletingPodsBurst = 1.0/60, 1
	return NodeOptions{Config: cfg}
}

func nodeKey(name string) persistence.Key { return persistence.Key{Resource: "nodes", Name: name} }

func newNode(name string, created time.Time, heartbeat *time.Time) *corev1.Node {
	n := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-node-" + name), CreationTimestamp: metav1.NewTime(created)},
	}
	if heartbeat != nil {
		n.Status.Conditions = []corev1.NodeCondition{readyCondition(*heartbeat, created)}
	}
	return n
}

func readyCondition(heartbeat, transition time.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.NewTime(heartbeat), LastTransitionTime: metav1.NewTime(transition)}
}

func getNode(t testing.TB, st *persistence.Store, name string) *corev1.Node {
	t.Helper()
	it, err := st.Get(nodeKey(name))
	if err != nil {
		t.Fatalf("get node %s: %v", name, err)
	}
	return it.Object().(*corev1.Node)
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// heartbeat posts the node's status as its agent does, through an update.
func heartbeat(t testing.TB, s *System, st *persistence.Store, name string, now time.Time) {
	t.Helper()
	n := getNode(t, st, name).DeepCopy()
	n.Status.Conditions = []corev1.NodeCondition{readyCondition(now, n.CreationTimestamp.Time)}
	if _, err := s.Update(context.Background(), nodeKey(name), n, command.Preconditions{}); err != nil {
		t.Fatalf("heartbeat %s: %v", name, err)
	}
}

func TestNodeReadiness(t *testing.T) {
	tests := []struct {
		name      string
		posted    bool          // the node posted a Ready status at creation
		beatEvery time.Duration // heartbeats while the clock moves; 0: none
		advance   time.Duration // total clock movement, in 10s steps
		want      corev1.ConditionStatus
		reason    string
	}{
		{name: "never posted, within the startup grace period", advance: 50 * time.Second, want: ""},
		{name: "never posted, past the startup grace period", advance: 60 * time.Second, want: corev1.ConditionUnknown, reason: node.ReasonStatusNeverUpdated},
		{name: "heartbeats keep it Ready", posted: true, beatEvery: 20 * time.Second, advance: 3 * time.Minute, want: corev1.ConditionTrue},
		{name: "heartbeats stop: Unknown after the grace period", posted: true, advance: 40 * time.Second, want: corev1.ConditionUnknown, reason: node.ReasonStatusUnknown},
		{name: "within the grace period: still Ready", posted: true, advance: 30 * time.Second, want: corev1.ConditionTrue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			st := openControllerStore(t)
			s := startControllers(t, st, clock, testNodeOptions(), ServiceOptions{})
			now := clock.Now()
			var hb *time.Time
			if tc.posted {
				hb = &now
			}
			if _, err := s.Create(context.Background(), nodeKey("n1"), newNode("n1", now, hb)); err != nil {
				t.Fatalf("create node: %v", err)
			}
			forceSync(t, s, nodeKey("n1"))
			for moved := time.Duration(0); moved < tc.advance; {
				clock.Advance(10 * time.Second)
				moved += 10 * time.Second
				if tc.beatEvery > 0 && moved%tc.beatEvery == 0 {
					heartbeat(t, s, st, "n1", clock.Now())
				}
				forceSync(t, s, nodeKey("n1"))
			}
			n := getNode(t, st, "n1")
			if got := readyStatus(n); got != tc.want {
				t.Fatalf("Ready = %q, want %q (%+v)", got, tc.want, n.Status.Conditions)
			}
			if tc.reason != "" && n.Status.Conditions[0].Reason != tc.reason {
				t.Errorf("reason = %q, want %q", n.Status.Conditions[0].Reason, tc.reason)
			}
			if n.Labels[node.HostnameLabel] != "n1" {
				t.Errorf("labels = %v, want the hostname label", n.Labels)
			}
		})
	}
}

func TestNodeEvictionRateLimited(t *testing.T) {
	clock := newFakeClock()
	st := openControllerStore(t)
	s := startControllers(t, st, clock, testNodeOptions(), ServiceOptions{})
	ctx := context.Background()
	now := clock.Now()
	nodes := []string{"n1", "n2", "n3"}
	for _, name := range nodes {
		if _, err := s.Create(ctx, nodeKey(name), newNode(name, now, &now)); err != nil {
			t.Fatalf("create node: %v", err)
		}
		if _, err := s.Create(ctx, podKey("default", "p-"+name), newPod("default", "p-"+name).node(name).obj()); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}
	// A pod on a healthy node is never evicted.
	if _, err := s.Create(ctx, nodeKey("healthy"), newNode("healthy", now, &now)); err != nil {
		t.Fatalf("create node: %v", err)
	}
	if _, err := s.Create(ctx, podKey("default", "p-healthy"), newPod("default", "p-healthy").node("healthy").obj()); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	evicted := func() int {
		n := 0
		for _, name := range nodes {
			it, err := st.Get(podKey("default", "p-"+name))
			if errors.Is(err, persistence.ErrNotFound) || (err == nil && it.Object().(*corev1.Pod).DeletionTimestamp != nil) {
				n++
			}
		}
		return n
	}
	syncAll := func() {
		for _, name := range append(nodes, "healthy") {
			forceSync(t, s, nodeKey(name))
		}
	}
	step := func(d time.Duration) {
		clock.Advance(d)
		heartbeat(t, s, st, "healthy", clock.Now())
		syncAll()
	}
	// The controller first sees the heartbeats now, before the clock moves: a node's
	// first sync records when it observed the last heartbeat (on the controller's clock).
	syncAll()
	step(4 * time.Minute)
	if n := evicted(); n != 0 {
		t.Fatalf("%d nodes' pods evicted before the eviction timeout", n)
	}
	for _, name := range nodes {
		if got := readyStatus(getNode(t, st, name)); got != corev1.ConditionUnknown {
			t.Fatalf("node %s Ready = %q, want Unknown", name, got)
		}
	}
	step(30 * time.Second) // past the last heartbeat + eviction timeout - grace period
	for want := 1; want <= len(nodes); want++ {
		waitFor(t, fmt.Sprintf("%d nodes' pods evicted", want), func() error {
			if n := evicted(); n != want {
				return fmt.Errorf("%d evicted", n)
			}
			return nil
		})
		syncAll()
		if n := evicted(); n != want {
			t.Fatalf("%d evicted, want %d: the rate limit was not kept", n, want)
		}
		step(time.Minute)
	}
	it, err := st.Get(podKey("default", "p-healthy"))
	if err != nil || it.Object().(*corev1.Pod).DeletionTimestamp != nil {
		t.Fatalf("the healthy node's pod was evicted: %v", err)
	}
}

// TestNodeEvents: the node controller records RegisteredNode and NodeReady when it
// first sees a Ready node, and NodeNotReady when its heartbeats stop, as kubectl
// describe node shows them.
func TestNodeEvents(t *testing.T) {
	clock := newFakeClock()
	st := openControllerStore(t)
	s := startControllers(t, st, clock, testNodeOptions(), ServiceOptions{})
	now := clock.Now()
	if _, err := s.Create(context.Background(), nodeKey("n1"), newNode("n1", now, &now)); err != nil {
		t.Fatal(err)
	}
	reasons := func(want ...string) func() error {
		return func() error {
			var got []string
			for _, e := range storedEvents(t, st, "involvedObject.kind=Node,involvedObject.name=n1") {
				got = append(got, e.Reason+": "+e.Message)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("events %q, want %q", got, want)
			}
			return nil
		}
	}
	registered := "RegisteredNode: Node n1 event: Registered Node n1 in NodeController"
	ready := "NodeReady: Node n1 status is now: NodeReady"
	waitFor(t, "registered and ready", reasons(ready, registered))
	clock.Advance(time.Minute) // past the monitor grace period, with no heartbeat
	forceSync(t, s, nodeKey("n1"))
	waitFor(t, "not ready", reasons("NodeNotReady: Node n1 status is now: NodeNotReady", ready, registered))
}
