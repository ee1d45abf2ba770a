package sim

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// eventually polls check until it returns nil or the deadline passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, check)
}

// runSim runs two nodes named t-0 and t-1 of maxPods pods each, with 4 writers,
// against cs until stop is called or the test ends.
func runSim(t *testing.T, cs kubernetes.Interface, heartbeat time.Duration, maxPods string, beats ...kubernetes.Interface) (s *Simulator, stop func()) {
	t.Helper()
	cfg := Config{
		Nodes: 2, NamePrefix: "t", StatusFrequency: heartbeat, Workers: 4,
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
			corev1.ResourcePods: resource.MustParse(maxPods),
		},
		KubeletVersion: "v1.0.0-kubeactor",
	}
	for _, b := range beats { // the heartbeats' own client (Config.Beats)
		cfg.Beats = apiclient.NewForClientset(b)
	}
	s, err := New(cfg, apiclient.NewForClientset(cs), logrus.New())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return s, stop
}

// TestSimulatorLifecycle runs the simulator's plumbing under -race against client-go's
// fake clientset (the e2e test runs it against the real server): registration,
// heartbeats, starting, rejecting and removing pods.
func TestSimulatorLifecycle(t *testing.T) {
	deleting := metav1.NewTime(t0)
	cs := fake.NewClientset(
		// Found at start-up: running with an IP the pool must not hand out again.
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "default", UID: "uid-old"},
			Spec:       corev1.PodSpec{NodeName: "t-1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.100.1.2"},
		},
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "going", Namespace: "default", UID: "uid-going", DeletionTimestamp: &deleting},
			Spec:       corev1.PodSpec{NodeName: "t-0", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		},
	)
	ctx := context.Background()
	s, stop := runSim(t, cs, 200*time.Millisecond, "2")

	pods := cs.CoreV1().Pods("default")
	nodes := cs.CoreV1().Nodes()
	eventually(t, "nodes registered", func() error {
		for i := range 2 {
			n, err := nodes.Get(ctx, fmt.Sprintf("t-%d", i), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if n.Spec.PodCIDR != fmt.Sprintf("10.100.%d.0/24", i) || len(n.Status.Conditions) != 1 {
				return fmt.Errorf("node %s: %+v", n.Name, n.Spec)
			}
		}
		return nil
	})
	eventually(t, "heartbeats", func() error {
		if s.Stats().Heartbeats < 4 {
			return fmt.Errorf("too few heartbeats (%+v)", s.Stats())
		}
		return nil
	})
	eventually(t, "deleting pod removed", func() error {
		if _, err := pods.Get(ctx, "going", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("pod going still there")
		}
		return nil
	})

	create := func(name, node string) {
		t.Helper()
		_, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: k8stypes.UID("uid-" + name)},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	phase := func(name string, want corev1.PodPhase) func() error {
		return func() error {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != want {
				return fmt.Errorf("pod %s is %q, want %s", name, p.Status.Phase, want)
			}
			return nil
		}
	}
	create("new", "t-1")
	create("elsewhere", "other-node")
	eventually(t, "new pod running", phase("new", corev1.PodRunning))
	p, err := pods.Get(ctx, "new", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.PodIP != "10.100.1.3" || p.Status.HostIP != "127.16.0.2" {
		t.Errorf("new: podIP %s hostIP %s, want 10.100.1.3 (10.100.1.2 is old's) and 127.16.0.2", p.Status.PodIP, p.Status.HostIP)
	}
	// t-1 runs old and new: its two pods. A third is rejected.
	create("third", "t-1")
	eventually(t, "third pod rejected", phase("third", corev1.PodFailed))
	if p, _ := pods.Get(ctx, "elsewhere", metav1.GetOptions{}); p.Status.Phase != "" {
		t.Errorf("a pod of another node was touched: %+v", p.Status)
	}

	// Deleted pods free their IPs: the next pod gets one again.
	if err := pods.Delete(ctx, "new", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "IP released", func() error {
		n := s.byName["t-1"]
		n.mu.Lock()
		defer n.mu.Unlock()
		if _, held := n.pool.Lookup("uid-new"); held {
			return fmt.Errorf("uid-new still holds an IP")
		}
		return nil
	})
	create("fourth", "t-1")
	eventually(t, "fourth pod running", phase("fourth", corev1.PodRunning))
	if p, _ := pods.Get(ctx, "fourth", metav1.GetOptions{}); !netip.MustParsePrefix("10.100.1.0/24").Contains(netip.MustParseAddr(p.Status.PodIP)) {
		t.Errorf("fourth: podIP %s", p.Status.PodIP)
	}
	stop()
	st := s.Stats()
	if st.Registered != 2 || st.PodsStarted != 2 || st.PodsRejected != 1 || st.PodsRemoved != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestHeartbeatsDuringPodBacklog blocks every pod status write (a server slow with a
// backlog of pod work, as after a restart when the watch hands over every bound pod at
// once) and checks that the nodes still post their heartbeats: the pod writers are
// all stuck, so heartbeats queued behind pod work would stop.
func TestHeartbeatsDuringPodBacklog(t *testing.T) {
	fakeCS := fake.NewClientset()
	cs := &stuckPodStatus{Clientset: fakeCS, stuckPods: true}
	ctx := context.Background()
	s, _ := runSim(t, cs, 100*time.Millisecond, "110") // its stop frees the stuck writes
	for i := range 10 {                                // more pods than writers
		_, err := fakeCS.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default", UID: k8stypes.UID(fmt.Sprintf("uid-p%d", i))},
			Spec:       corev1.PodSpec{NodeName: "t-0", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	_, podWriters := splitWorkers(4)
	eventually(t, "every pod writer stuck", func() error {
		if n := cs.stuck.Load(); n < int64(podWriters) {
			return fmt.Errorf("%d pod status writes stuck, want %d", n, podWriters)
		}
		return nil
	})
	from := s.Stats().Heartbeats
	eventually(t, "heartbeats go on", func() error {
		if n := s.Stats().Heartbeats - from; n < 6 {
			return fmt.Errorf("%d heartbeats since the pod writers got stuck, want 6", n)
		}
		return nil
	})
	if n := s.Stats().PodsStarted; n != 0 {
		t.Fatalf("%d pods started with every pod status write stuck", n)
	}
}

// stuckPodStatus is a clientset whose pod status writes never return until their
// context ends (when stuckPods is set) and which counts node status writes;
// everything else is the fake's. (The fake's own reactors run under its lock, so a
// reactor that blocks would block every call.)
type stuckPodStatus struct {
	*fake.Clientset
	stuckPods  bool
	stuck      atomic.Int64 // pod status writes blocked
	nodeStatus atomic.Int64 // node status writes
}

func (c *stuckPodStatus) CoreV1() typedcorev1.CoreV1Interface {
	return stuckCore{CoreV1Interface: c.Clientset.CoreV1(), c: c}
}

type stuckCore struct {
	typedcorev1.CoreV1Interface
	c *stuckPodStatus
}

func (s stuckCore) Pods(ns string) typedcorev1.PodInterface {
	return stuckPods{PodInterface: s.CoreV1Interface.Pods(ns), c: s.c}
}

func (s stuckCore) Nodes() typedcorev1.NodeInterface {
	return countedNodes{NodeInterface: s.CoreV1Interface.Nodes(), c: s.c}
}

type countedNodes struct {
	typedcorev1.NodeInterface
	c *stuckPodStatus
}

func (n countedNodes) UpdateStatus(ctx context.Context, node *corev1.Node, opts metav1.UpdateOptions) (*corev1.Node, error) {
	n.c.nodeStatus.Add(1)
	return n.NodeInterface.UpdateStatus(ctx, node, opts)
}

type stuckPods struct {
	typedcorev1.PodInterface
	c *stuckPodStatus
}

func (p stuckPods) UpdateStatus(ctx context.Context, pod *corev1.Pod, opts metav1.UpdateOptions) (*corev1.Pod, error) {
	if !p.c.stuckPods {
		return p.PodInterface.UpdateStatus(ctx, pod, opts)
	}
	p.c.stuck.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestHeartbeatWriters: a quarter of the workers, or enough writers for every node
// to post each period at beatLatency a heartbeat, whichever is more; never more
// writers than nodes.
func TestHeartbeatWriters(t *testing.T) {
	tests := []struct {
		name           string
		nodes, workers int
		period         time.Duration
		want           int
	}{
		{name: "one node", nodes: 1, workers: 32, period: 10 * time.Second, want: 8},
		{name: "100 nodes", nodes: 100, workers: 32, period: 10 * time.Second, want: 8},
		{name: "1,000 nodes", nodes: 1000, workers: 32, period: 10 * time.Second, want: 50},
		{name: "5,000 nodes", nodes: 5000, workers: 32, period: 10 * time.Second, want: 250},
		{name: "5,000 nodes every second", nodes: 5000, workers: 32, period: time.Second, want: 2500},
		{name: "more than one writer a node", nodes: 3, workers: 4, period: 100 * time.Millisecond, want: 3},
		{name: "a rounded-up share", nodes: 21, workers: 4, period: 10 * time.Second, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HeartbeatWriters(tt.nodes, tt.workers, tt.period); got != tt.want {
				t.Errorf("HeartbeatWriters(%d, %d, %s) = %d, want %d", tt.nodes, tt.workers, tt.period, got, tt.want)
			}
		})
	}
}

// TestHeartbeatsThroughTheirOwnClient: with Config.Beats, node status goes through
// that client, and none through the pods' client.
func TestHeartbeatsThroughTheirOwnClient(t *testing.T) {
	fakeCS := fake.NewClientset()
	pods, beats := &stuckPodStatus{Clientset: fakeCS}, &stuckPodStatus{Clientset: fakeCS}
	runSim(t, pods, 50*time.Millisecond, "110", beats)
	eventually(t, "heartbeats", func() error {
		if n := beats.nodeStatus.Load(); n < 4 {
			return fmt.Errorf("%d node status writes through the heartbeats' client, want 4", n)
		}
		return nil
	})
	if n := pods.nodeStatus.Load(); n != 0 {
		t.Errorf("%d node status writes through the pods' client", n)
	}
}
