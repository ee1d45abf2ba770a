package scheduler

import (
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

// randomCluster fills a cache with nodes of random sizes and labels, some not ready
// or unschedulable, a service and pods already placed.
func randomCluster(r *rand.Rand, nodes int) *Cache {
	c := NewCache()
	for i := 0; i < nodes; i++ {
		b := st.NewNode(fmt.Sprintf("n%02d", i)).CPU(fmt.Sprintf("%dm", 500+r.Intn(4000))).
			Mem(fmt.Sprintf("%dMi", 256+r.Intn(4096))).Pods(int64(1+r.Intn(12))).
			Labels("zone", []string{"a", "b", "c"}[r.Intn(3)])
		if r.Intn(3) == 0 {
			b.Labels("ssd", "true")
		}
		switch r.Intn(12) {
		case 0:
			b.NotReady()
		case 1:
			b.Unschedulable()
		}
		c.SetNode(b.Obj())
	}
	c.SetService(st.NewService("web", "app", "web"))
	c.SetController(st.NewRC("db", "app", "db"))
	return c
}

func randomPod(r *rand.Rand, name string) *corev1.Pod {
	b := st.NewPod(name).Labels("app", []string{"web", "db"}[r.Intn(2)])
	if r.Intn(4) > 0 {
		b.CPU(fmt.Sprintf("%dm", r.Intn(1500)))
	}
	if r.Intn(4) > 0 {
		b.Mem(fmt.Sprintf("%dMi", r.Intn(1500)))
	}
	if r.Intn(3) == 0 {
		b.HostPortProto([]corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP}[r.Intn(2)], int32(8080+r.Intn(3)))
	}
	if r.Intn(4) == 0 {
		b.GCEPD(fmt.Sprintf("pd%d", r.Intn(3)), r.Intn(2) == 0)
	}
	if r.Intn(5) == 0 {
		b.EBS(fmt.Sprintf("vol%d", r.Intn(3)), false)
	}
	if r.Intn(5) == 0 {
		b.NodeSelector("ssd", "true")
	}
	return b.Obj()
}

var propertyPolicy = []byte(`{"predicates":[{"name":"PodFitsPorts"},{"name":"PodFitsResources"},{"name":"NoDiskConflict"},
	{"name":"MatchNodeSelector"},{"name":"HostName"},{"name":"ZoneAffinity","argument":{"serviceAffinity":{"labels":["zone"]}}}],
	"priorities":[{"name":"LeastRequestedPriority","weight":1},{"name":"BalancedResourceAllocation","weight":1},
	{"name":"ServiceSpreadingPriority","weight":2},{"name":"ZoneSpread","weight":1,"argument":{"serviceAntiAffinity":{"label":"zone"}}}]}`)

// schedule decides one pod, over all nodes at once or shard by shard and merged,
// as the actor layer may do.
func schedule(c *Cache, pod *corev1.Pod, policy *Policy, r *rand.Rand, shards int) Decision {
	if shards <= 1 {
		return c.Schedule(pod, policy, r.Intn)
	}
	ctx := c.Context(pod, policy)
	var d Decision
	for _, s := range c.Shards(shards) {
		d = Merge(d, Decide(pod, policy.BidNodes(pod, s, ctx, nil), r.Intn), r.Intn)
	}
	return d
}

// Property 1: the chosen node passed every predicate, and when none is chosen no
// eligible node passes them all.
func TestPropertyWinnerFits(t *testing.T) {
	custom, err := ParsePolicy(propertyPolicy)
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewSource(seed))
		c := randomCluster(r, 1+r.Intn(12))
		nodes := c.Nodes()
		for i := 0; i < r.Intn(30); i++ {
			c.SetPod(func() *corev1.Pod {
				p := randomPod(r, fmt.Sprintf("old%d", i))
				p.Spec.NodeName = nodes[r.Intn(len(nodes))].Name()
				return p
			}())
		}
		policy := DefaultPolicy()
		if seed%2 == 0 {
			policy = custom
		}
		pod := randomPod(r, "new")
		d := schedule(c, pod, &policy, r, 1+int(seed%3))
		ctx := c.Context(pod, &policy)
		passes := func(n *NodeInfo) bool {
			if ok, _ := n.Eligible(); !ok {
				return false
			}
			for _, p := range policy.Predicates {
				if ok, _ := p.Fits(pod, n, ctx); !ok {
					return false
				}
			}
			return true
		}
		if d.Node != "" && !passes(c.Node(d.Node)) {
			t.Fatalf("seed %d: chose %s, which fails a predicate", seed, d.Node)
		}
		feasible := 0
		for _, n := range nodes {
			if passes(n) {
				feasible++
			}
		}
		if feasible != d.Feasible || (feasible > 0) != (d.Node != "") {
			t.Fatalf("seed %d: %d nodes pass, decision says %d and chose %q", seed, feasible, d.Feasible, d.Node)
		}
	}
}

// Property 2: scheduling a random stream of pods, assuming each decision, never
// overcommits a node's cpu, memory, pod slots, host ports or exclusive disks.
func TestPropertyNoOvercommit(t *testing.T) {
	custom, err := ParsePolicy(propertyPolicy)
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 100; seed++ {
		r := rand.New(rand.NewSource(seed))
		c := randomCluster(r, 2+r.Intn(10))
		policy := DefaultPolicy()
		if seed%2 == 0 {
			policy = custom
		}
		placed := map[string][]*corev1.Pod{}
		for i := 0; i < 200; i++ {
			pod := randomPod(r, fmt.Sprintf("p%d", i))
			d := schedule(c, pod, &policy, r, 1+int(seed%3))
			if d.Node == "" {
				continue
			}
			if err := c.Assume(pod, d.Node, t0); err != nil {
				t.Fatal(err)
			}
			placed[d.Node] = append(placed[d.Node], pod)
			if r.Intn(4) == 0 { // some bindings are observed meanwhile
				bound := pod.DeepCopy()
				bound.Spec.NodeName = d.Node
				c.SetPod(bound)
			}
		}
		for node, pods := range placed {
			if err := overcommitted(c.Node(node).Node(), pods); err != "" {
				t.Fatalf("seed %d: node %s: %s", seed, node, err)
			}
		}
	}
}

// overcommitted checks a node's pods from scratch, independently of NodeInfo.
func overcommitted(node *corev1.Node, pods []*corev1.Pod) string {
	var cpu, mem int64
	ports := map[string]bool{}
	disks := map[string]bool{}
	for _, p := range pods {
		for _, ct := range p.Spec.Containers {
			cpu += ct.Resources.Requests.Cpu().MilliValue()
			mem += ct.Resources.Requests.Memory().Value()
			for _, hp := range ct.Ports {
				k := fmt.Sprintf("%s/%d", hp.Protocol, hp.HostPort)
				if ports[k] {
					return "host port " + k + " used twice"
				}
				ports[k] = true
			}
		}
		for _, v := range p.Spec.Volumes {
			switch {
			case v.AWSElasticBlockStore != nil:
				k := "ebs/" + v.AWSElasticBlockStore.VolumeID
				if disks[k] {
					return k + " mounted twice"
				}
				disks[k] = true
			case v.GCEPersistentDisk != nil && !v.GCEPersistentDisk.ReadOnly:
				if disks["gce/"+v.GCEPersistentDisk.PDName] {
					return "gce pd " + v.GCEPersistentDisk.PDName + " mounted read-write and again"
				}
				disks["gce/"+v.GCEPersistentDisk.PDName] = true
			}
		}
	}
	for _, p := range pods { // read-only GCE mounts clash with a read-write one
		for _, v := range p.Spec.Volumes {
			if v.GCEPersistentDisk != nil && v.GCEPersistentDisk.ReadOnly && disks["gce/"+v.GCEPersistentDisk.PDName] {
				return "gce pd " + v.GCEPersistentDisk.PDName + " mounted read-write and read-only"
			}
		}
	}
	capacity := node.Status.Capacity
	switch {
	case cpu > capacity.Cpu().MilliValue():
		return fmt.Sprintf("cpu %dm > %dm", cpu, capacity.Cpu().MilliValue())
	case mem > capacity.Memory().Value():
		return fmt.Sprintf("memory %d > %d", mem, capacity.Memory().Value())
	case int64(len(pods)) > capacity.Pods().Value():
		return fmt.Sprintf("%d pods > %d", len(pods), capacity.Pods().Value())
	}
	return ""
}

// Property 3: identical pods of one service or of one replication controller spread
// over identical nodes under the default policy end with at most one pod of
// difference between nodes, whatever the tie-break.
func TestPropertySpread(t *testing.T) {
	for seed := int64(1); seed <= 100; seed++ {
		r := rand.New(rand.NewSource(seed))
		c := NewCache()
		nodes := 1 + r.Intn(20)
		for i := 0; i < nodes; i++ {
			c.SetNode(st.NewNode(fmt.Sprintf("n%02d", i)).CPU("64").Mem("256Gi").Pods(110).Obj())
		}
		if seed%2 == 0 {
			c.SetService(st.NewService("web", "app", "web"))
		} else {
			c.SetController(st.NewRC("web", "app", "web"))
		}
		cpu, mem := fmt.Sprintf("%dm", 1+r.Intn(500)), fmt.Sprintf("%dMi", 1+r.Intn(1000))
		policy := DefaultPolicy()
		pods := r.Intn(10*nodes + 1)
		for i := 0; i < pods; i++ {
			pod := st.NewPod(fmt.Sprintf("web-%d", i)).Labels("app", "web").CPU(cpu).Mem(mem).Obj()
			d := schedule(c, pod, &policy, r, 1+int(seed%3))
			if d.Node == "" {
				t.Fatalf("seed %d: pod %d found no node: %s", seed, i, FailedSchedulingMessage(d))
			}
			if err := c.Assume(pod, d.Node, t0); err != nil {
				t.Fatal(err)
			}
		}
		lo, hi := pods, 0
		for _, n := range c.Nodes() {
			lo, hi = min(lo, n.NumPods()), max(hi, n.NumPods())
		}
		if hi-lo > 1 {
			t.Fatalf("seed %d: %d pods over %d nodes spread %d..%d", seed, pods, nodes, lo, hi)
		}
	}
}
