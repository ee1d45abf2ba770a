package scheduler

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

var t0 = time.Date(2015, 7, 21, 0, 0, 0, 0, time.UTC)

func TestCacheAssume(t *testing.T) {
	pod := st.NewPod("web").CPU("1").HostPort(80).Obj()
	bound := st.NewPod("web").CPU("1").HostPort(80).Node("n1").Obj()
	tests := []struct {
		name    string
		steps   func(c *Cache) error
		cpu     int64 // requested on n1 afterwards
		assumed bool
		wantErr error
	}{
		{name: "assume counts at once", steps: func(c *Cache) error { return c.Assume(pod, "n1", t0) }, cpu: 1000, assumed: true},
		{name: "binding observed confirms", steps: func(c *Cache) error {
			_ = c.Assume(pod, "n1", t0)
			c.SetPod(bound)
			return nil
		}, cpu: 1000},
		{name: "unbound update keeps the assumption", steps: func(c *Cache) error {
			_ = c.Assume(pod, "n1", t0)
			c.SetPod(pod)
			return nil
		}, cpu: 1000, assumed: true},
		{name: "forget frees", steps: func(c *Cache) error {
			_ = c.Assume(pod, "n1", t0)
			c.Forget("default/web")
			return nil
		}},
		{name: "forget leaves bound pods", steps: func(c *Cache) error {
			c.SetPod(bound)
			c.Forget("default/web")
			return nil
		}, cpu: 1000},
		{name: "confirm stops expiry", steps: func(c *Cache) error {
			_ = c.Assume(pod, "n1", t0)
			c.Confirm("default/web")
			c.Expire(t0.Add(time.Hour), time.Minute)
			return nil
		}, cpu: 1000},
		{name: "expiry forgets", steps: func(c *Cache) error {
			_ = c.Assume(pod, "n1", t0)
			if got := c.Expire(t0.Add(30*time.Second), time.Minute); got != nil {
				return fmt.Errorf("expired early: %v", got)
			}
			if got := c.Expire(t0.Add(time.Minute), time.Minute); !reflect.DeepEqual(got, []string{"default/web"}) {
				return fmt.Errorf("expired %v", got)
			}
			return nil
		}},
		{name: "terminated pod frees", steps: func(c *Cache) error {
			c.SetPod(bound)
			done := bound.DeepCopy()
			done.Status.Phase = corev1.PodSucceeded
			c.SetPod(done)
			return nil
		}},
		{name: "assume twice", steps: func(c *Cache) error {
			_ = c.Assume(pod, "n1", t0)
			return c.Assume(pod, "n1", t0)
		}, cpu: 1000, assumed: true, wantErr: ErrPodPlaced},
		{name: "unknown node", steps: func(c *Cache) error { return c.Assume(pod, "nx", t0) }, wantErr: ErrUnknownNode},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache()
			c.SetNode(st.NewNode("n1").Obj())
			if err := tc.steps(c); !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			n := c.Node("n1")
			if cpu, _ := n.Requested(); cpu != tc.cpu {
				t.Errorf("requested cpu = %d, want %d", cpu, tc.cpu)
			}
			if used := n.HostPortInUse(corev1.ProtocolTCP, 80); used != (tc.cpu > 0) {
				t.Errorf("port 80 in use = %v", used)
			}
			if got := c.IsAssumed("default/web"); got != tc.assumed {
				t.Errorf("assumed = %v, want %v", got, tc.assumed)
			}
		})
	}
}

func TestCacheNodes(t *testing.T) {
	c := NewCache()
	c.SetPod(st.NewPod("early").CPU("1").Node("late").Obj()) // bound before its node is seen
	if c.Node("late") != nil || len(c.Nodes()) != 0 {
		t.Fatal("a placeholder must not be a node")
	}
	c.SetNode(st.NewNode("late").Obj())
	c.SetNode(st.NewNode("a").Obj())
	if cpu, _ := c.Node("late").Requested(); cpu != 1000 {
		t.Fatalf("pod bound before the node: cpu %d, want 1000", cpu)
	}
	if names := nodeNames(c.Nodes()); !reflect.DeepEqual(names, []string{"a", "late"}) {
		t.Fatalf("Nodes = %v", names)
	}
	c.RemoveNode("late")
	if names := nodeNames(c.Nodes()); !reflect.DeepEqual(names, []string{"a"}) {
		t.Fatalf("after removal Nodes = %v", names)
	}
	c.SetNode(st.NewNode("late").Labels("new", "yes").Obj())
	if cpu, _ := c.Node("late").Requested(); cpu != 1000 {
		t.Fatalf("pods must survive the node's removal: cpu %d", cpu)
	}
	c.DeletePod("default/early")
	c.RemoveNode("late")
	if len(c.nodes) != 1 || len(c.free) != 1 {
		t.Fatalf("empty removed node must free its slot: %d nodes, %d free", len(c.nodes), len(c.free))
	}

	for i := 0; i < 50; i++ {
		c.SetNode(st.NewNode(fmt.Sprintf("n%02d", i)).Obj())
	}
	shards := c.Shards(4)
	seen := map[string]bool{}
	for _, s := range shards {
		if len(s) == 0 {
			t.Error("empty shard among 51 nodes")
		}
		for _, n := range s {
			seen[n.Name()] = true
		}
	}
	if len(seen) != 51 {
		t.Fatalf("shards hold %d nodes, want 51", len(seen))
	}
	again := c.Shards(4)
	if !reflect.DeepEqual(nodeNames(shards[2]), nodeNames(again[2])) {
		t.Fatal("shards must be stable")
	}
}

func nodeNames(ns []*NodeInfo) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name())
	}
	return out
}

func TestServiceAffinity(t *testing.T) {
	c := NewCache()
	c.SetNode(st.NewNode("a1").Labels("region", "r1", "zone", "a").Obj())
	c.SetNode(st.NewNode("a2").Labels("region", "r1", "zone", "a").Obj())
	c.SetNode(st.NewNode("b1").Labels("region", "r1", "zone", "b").Obj())
	c.SetNode(st.NewNode("c1").Labels("region", "r2", "zone", "c").Obj())
	c.SetService(st.NewService("web", "app", "web"))
	policy, err := ParsePolicy([]byte(`{"predicates":[{"name":"RegionZone","argument":{"serviceAffinity":{"labels":["region","zone"]}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	fits := func(pod *corev1.Pod) []string {
		ctx := c.Context(pod, &policy)
		var out []string
		for _, n := range c.Nodes() {
			if b := policy.Bid(pod, n, ctx); b.Fits {
				out = append(out, n.Name())
			}
		}
		return out
	}
	web := st.NewPod("web-1").Labels("app", "web").Obj()
	if got := fits(web); len(got) != 4 {
		t.Fatalf("first pod of a service goes anywhere, got %v", got)
	}
	c.SetPod(st.NewPod("web-0").Labels("app", "web").Node("a2").Obj())
	if got := fits(web); !reflect.DeepEqual(got, []string{"a1", "a2"}) {
		t.Fatalf("follows the first pod's region and zone: got %v", got)
	}
	pinned := st.NewPod("web-2").Labels("app", "web").NodeSelector("zone", "b").Obj()
	if got := fits(pinned); !reflect.DeepEqual(got, []string{"b1"}) {
		t.Fatalf("node selector takes precedence for zone: got %v", got)
	}
	if got := fits(st.NewPod("db").Labels("app", "db").Obj()); len(got) != 4 {
		t.Fatalf("another service is unconstrained, got %v", got)
	}
}

// TestAggregatesProperty: after any sequence of pod, node and service events the
// cache's aggregates equal those recomputed from scratch from the pods it holds.
func TestAggregatesProperty(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		c := NewCache()
		nodes := []string{"n0", "n1", "n2", "n3"}
		apps := []string{"web", "db", "cache"}
		pods := map[string]*corev1.Pod{} // the last version of each pod the cache took
		for step := 0; step < 300; step++ {
			name := fmt.Sprintf("p%d", r.Intn(30))
			switch op := r.Intn(10); {
			case op < 4:
				b := st.NewPod(name).Labels("app", apps[r.Intn(3)]).CPU(fmt.Sprintf("%dm", r.Intn(500))).Mem(fmt.Sprintf("%dMi", r.Intn(300))).
					Node(nodes[r.Intn(4)])
				if r.Intn(3) == 0 {
					b.HostPort(int32(80 + r.Intn(3)))
				}
				if r.Intn(3) == 0 {
					b.GCEPD(fmt.Sprintf("pd%d", r.Intn(3)), r.Intn(2) == 0)
				}
				if r.Intn(8) == 0 {
					b.Phase(corev1.PodFailed)
				}
				p := b.Obj()
				c.SetPod(p)
				pods[PodKey(p)] = p
			case op < 6:
				p, node := st.NewPod(name).Labels("app", apps[r.Intn(3)]).CPU("100m").HostPort(81).Obj(), nodes[r.Intn(4)]
				if c.Assume(p, node, t0) == nil {
					p.Spec.NodeName = node
					pods[PodKey(p)] = p
				}
			case op < 7:
				c.DeletePod("default/" + name)
			case op < 8:
				c.Forget("default/" + name)
			case op < 9:
				if r.Intn(2) == 0 {
					c.SetNode(st.NewNode(nodes[r.Intn(4)]).Obj())
				} else {
					c.RemoveNode(nodes[r.Intn(4)])
				}
			default:
				if r.Intn(2) == 0 {
					c.SetService(st.NewService(apps[r.Intn(3)], "app", apps[r.Intn(3)]))
				} else {
					c.RemoveService("default", apps[r.Intn(3)])
				}
			}
			checkAggregates(t, seed, step, c, pods)
		}
	}
}

func checkAggregates(t *testing.T, seed int64, step int, c *Cache, pods map[string]*corev1.Pod) {
	t.Helper()
	for name, n := range c.nodes {
		fresh := NewNodeInfo(n.node)
		for key, p := range c.pods {
			if p.node == name {
				fresh.AddPod(pods[key]) // the version the cache was last given
			}
		}
		if n.milliCPU != fresh.milliCPU || n.memory != fresh.memory || n.nzMilliCPU != fresh.nzMilliCPU ||
			n.nzMemory != fresh.nzMemory || len(n.pods) != len(fresh.pods) || !samePorts(n.ports, fresh.ports) ||
			len(n.disks) != len(fresh.disks) {
			t.Fatalf("seed %d step %d: node %s aggregates drifted: %+v vs fresh %+v", seed, step, name, n, fresh)
		}
		if c.slots[n.slot] != n {
			t.Fatalf("seed %d step %d: slot %d does not hold %s", seed, step, n.slot, name)
		}
	}
	for _, list := range c.services {
		for _, s := range list {
			total, maxN := 0, 0
			per := map[int]int{}
			for _, p := range c.pods {
				if s.matches(p.labels) {
					per[c.nodes[p.node].slot]++
				}
			}
			for slot, k := range per {
				total += k
				maxN = max(maxN, k)
				if int(s.perSlot[slot]) != k {
					t.Fatalf("seed %d step %d: service %s slot %d count %d, want %d", seed, step, s.key, slot, s.perSlot[slot], k)
				}
			}
			if s.total != total || s.max != maxN {
				t.Fatalf("seed %d step %d: service %s total/max %d/%d, want %d/%d", seed, step, s.key, s.total, s.max, total, maxN)
			}
		}
	}
}

func samePorts(a, b map[hostPort]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
