package scheduler

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
)

// Errors of Cache.Assume.
var (
	ErrUnknownNode = errors.New("scheduler: unknown node")
	ErrPodPlaced   = errors.New("scheduler: pod already placed")
)

// Cache is the scheduler's view of the cluster: nodes with the pods bound or assumed
// on them, and services with their pods counted per node. A pod it decided counts at
// once (Assume) until the binding is observed (SetPod or Confirm) or given up
// (Forget, Expire), so consecutive decisions never overcommit a node.
//
// It is for a single goroutine (an actor). NodeInfos and PodContexts it hands out may
// be read by other goroutines (shard actors) during a bidding round, provided the
// Cache is not changed until every bid of the round is in.
type Cache struct {
	nodes    map[string]*NodeInfo
	slots    []*NodeInfo // slot -> node; nil when free
	free     []int
	sorted   []*NodeInfo // real nodes by name; nil when stale
	pods     map[string]*cachedPod
	assumed  map[string]time.Time
	services map[string][]*serviceEntry // namespace -> services by name
	svcGen   uint64                     // bumped by every service change
	changed  []*NodeInfo                // nodes changed since the last Changes
	bids     []Bid                      // reused by Schedule
}

type cachedPod struct {
	pod  *corev1.Pod
	node string
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{
		nodes:    make(map[string]*NodeInfo),
		pods:     make(map[string]*cachedPod),
		assumed:  make(map[string]time.Time),
		services: make(map[string][]*serviceEntry),
	}
}

// SetNode adds or updates a node, keeping the pods counted on it.
func (c *Cache) SetNode(node *corev1.Node) {
	if n, ok := c.nodes[node.Name]; ok {
		if n.node == nil {
			c.sorted = nil
		}
		n.SetNode(node)
		c.touch(n)
		return
	}
	n := NewNodeInfo(node)
	c.place(n)
	c.touch(n)
	c.sorted = nil
}

// touch records that a node's NodeInfo changed, once until the next Changes.
func (c *Cache) touch(n *NodeInfo) {
	if !n.touched {
		n.touched = true
		c.changed = append(c.changed, n)
	}
}

// Changes returns the nodes whose NodeInfo changed (node object, pods, removal) since
// the last call, each once, and starts a new list: the returned slice is the
// caller's. Incremental deciders (Shard.Touch) must see every change.
func (c *Cache) Changes() []*NodeInfo {
	ch := c.changed
	c.changed = nil
	for _, n := range ch {
		n.touched = false
	}
	return ch
}

// RemoveNode forgets a node. Pods still bound to it keep a placeholder, which never
// takes part in decisions, until they are gone.
func (c *Cache) RemoveNode(name string) {
	n, ok := c.nodes[name]
	if !ok || n.node == nil {
		return
	}
	c.sorted = nil
	c.touch(n)
	if len(n.pods) > 0 {
		n.SetNode(nil)
		return
	}
	c.unplace(n)
}

func (c *Cache) place(n *NodeInfo) {
	if k := len(c.free); k > 0 {
		n.slot = c.free[k-1]
		c.free = c.free[:k-1]
		c.slots[n.slot] = n
	} else {
		n.slot = len(c.slots)
		c.slots = append(c.slots, n)
	}
	c.nodes[n.name] = n
}

func (c *Cache) unplace(n *NodeInfo) {
	delete(c.nodes, n.name)
	c.slots[n.slot] = nil
	c.free = append(c.free, n.slot)
	n.slot = -1
}

// Node returns the NodeInfo of a known node, or nil.
func (c *Cache) Node(name string) *NodeInfo {
	if n := c.nodes[name]; n != nil && n.node != nil {
		return n
	}
	return nil
}

// Nodes returns every known node by name, the ineligible ones included (they bid
// "not ready" or "unschedulable"). The slice is shared: do not modify it.
func (c *Cache) Nodes() []*NodeInfo {
	if c.sorted == nil {
		c.sorted = make([]*NodeInfo, 0, len(c.nodes))
		for _, n := range c.nodes {
			if n.node != nil {
				c.sorted = append(c.sorted, n)
			}
		}
		sort.Slice(c.sorted, func(i, j int) bool { return c.sorted[i].name < c.sorted[j].name })
	}
	return c.sorted
}

// Shards splits the nodes into n groups by a hash of their names, so that a node
// stays in its shard as others come and go. Each group is ordered by name.
func (c *Cache) Shards(n int) [][]*NodeInfo {
	if n < 1 {
		n = 1
	}
	shards := make([][]*NodeInfo, n)
	for _, ni := range c.Nodes() {
		h := fnv.New32a()
		h.Write([]byte(ni.name))
		i := int(h.Sum32() % uint32(n))
		shards[i] = append(shards[i], ni)
	}
	return shards
}

// SetPod records an observed pod. A bound pod replaces any assumption about it (its
// binding is now observed); a terminated one frees its node; an unbound one changes
// nothing, so an assumption stays until the binding shows up.
func (c *Cache) SetPod(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	key := PodKey(pod)
	c.remove(key)
	delete(c.assumed, key)
	if podpkg.Terminal(pod) {
		return
	}
	c.add(key, pod, pod.Spec.NodeName)
}

// DeletePod forgets a pod, bound or assumed.
func (c *Cache) DeletePod(key string) {
	c.remove(key)
	delete(c.assumed, key)
}

// Assume counts a pod on the node it was just given, before the binding is observed.
func (c *Cache) Assume(pod *corev1.Pod, node string, now time.Time) error {
	key := PodKey(pod)
	if p, ok := c.pods[key]; ok {
		return fmt.Errorf("assume %s on %s: %w (on %s)", key, node, ErrPodPlaced, p.node)
	}
	if c.Node(node) == nil {
		return fmt.Errorf("assume %s: %w %q", key, ErrUnknownNode, node)
	}
	p := *pod
	p.Spec.NodeName = node
	c.add(key, &p, node)
	c.assumed[key] = now
	return nil
}

// Pods returns the keys of every pod counted, bound or assumed, sorted.
func (c *Cache) Pods() []string {
	keys := make([]string, 0, len(c.pods))
	for k := range c.pods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Confirm marks an assumed pod as bound: it stays counted and no longer expires.
func (c *Cache) Confirm(key string) { delete(c.assumed, key) }

// Forget drops an assumed pod (its binding failed). Bound pods are left alone.
func (c *Cache) Forget(key string) {
	if _, ok := c.assumed[key]; ok {
		c.DeletePod(key)
	}
}

// IsAssumed reports whether a pod is counted on an assumption.
func (c *Cache) IsAssumed(key string) bool {
	_, ok := c.assumed[key]
	return ok
}

// Expire forgets the pods assumed at or before now-ttl and returns their keys, sorted.
func (c *Cache) Expire(now time.Time, ttl time.Duration) []string {
	var keys []string
	for k, at := range c.assumed {
		if !at.Add(ttl).After(now) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.DeletePod(k)
	}
	return keys
}

func (c *Cache) add(key string, pod *corev1.Pod, node string) {
	if podpkg.Terminal(pod) {
		return
	}
	n, ok := c.nodes[node]
	if !ok {
		n = newPlaceholder(node)
		c.place(n)
	}
	n.AddPod(pod)
	c.touch(n)
	c.pods[key] = &cachedPod{pod: pod, node: node}
	for _, s := range c.services[namespace(pod.Namespace)] {
		if s.matches(pod.Labels) {
			s.inc(n.slot)
		}
	}
}

func (c *Cache) remove(key string) {
	p, ok := c.pods[key]
	if !ok {
		return
	}
	delete(c.pods, key)
	n := c.nodes[p.node]
	n.removeKey(key)
	c.touch(n)
	for _, s := range c.services[namespace(p.pod.Namespace)] {
		if s.matches(p.pod.Labels) {
			s.dec(n.slot)
		}
	}
	if n.node == nil && len(n.pods) == 0 {
		c.unplace(n)
	}
}

// SetService adds or updates a service and recounts its pods.
func (c *Cache) SetService(svc *corev1.Service) {
	ns := namespace(svc.Namespace)
	c.RemoveService(ns, svc.Name)
	c.svcGen++
	s := &serviceEntry{key: ns + "/" + svc.Name, name: svc.Name, selector: sortedPairs(svc.Spec.Selector)}
	for _, p := range c.pods {
		if namespace(p.pod.Namespace) == ns && s.matches(p.pod.Labels) {
			s.inc(c.nodes[p.node].slot)
		}
	}
	list := append(c.services[ns], s)
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	c.services[ns] = list
}

// RemoveService forgets a service.
func (c *Cache) RemoveService(ns, name string) {
	ns = namespace(ns)
	list := c.services[ns]
	for i, s := range list {
		if s.name == name {
			c.svcGen++
			c.services[ns] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// Context builds the pod's PodContext with what the policy needs from other nodes:
// the spread of its first service (services by name, as v1.0 uses the first), the
// service's pods per value of each anti-affinity label, and the label values that
// service affinity pins. It stays valid until the cache next changes.
func (c *Cache) Context(pod *corev1.Pod, policy *Policy) *PodContext {
	ctx := NewPodContext(pod)
	ctx.services = c.svcGen
	var s *serviceEntry
	for _, e := range c.services[namespace(pod.Namespace)] {
		if e.matches(pod.Labels) {
			s = e
			break
		}
	}
	if s == nil {
		return ctx
	}
	ctx.Service, ctx.ServicePods, ctx.MaxPerNode, ctx.perSlot = s.key, s.total, s.max, s.perSlot
	ctx.class = ctx.classKey()
	if s.total == 0 {
		return ctx
	}
	for _, w := range policy.Priorities {
		a, ok := w.Priority.(ServiceAntiAffinity)
		if !ok || w.Weight == 0 {
			continue
		}
		if _, done := ctx.labelCounts[a.Label]; done {
			continue
		}
		counts := make(map[string]int)
		for slot, k := range s.perSlot {
			if v, ok := c.slots[slot].labelValue(a.Label, k); ok {
				counts[v] += int(k)
			}
		}
		if ctx.labelCounts == nil {
			ctx.labelCounts = make(map[string]map[string]int)
		}
		ctx.labelCounts[a.Label] = counts
	}
	var host *NodeInfo // the first node, by name, holding a pod of the service
	for _, p := range policy.Predicates {
		a, ok := p.(CheckServiceAffinity)
		if !ok {
			continue
		}
		if host == nil {
			for slot, k := range s.perSlot {
				if n := c.slots[slot]; k > 0 && (host == nil || n.name < host.name) {
					host = n
				}
			}
		}
		for _, l := range a.Labels {
			if v, ok := host.labels[l]; ok {
				if ctx.affinity == nil {
					ctx.affinity = make(map[string]string)
				}
				ctx.affinity[l] = v
			}
		}
	}
	return ctx
}

func (n *NodeInfo) labelValue(label string, count int32) (string, bool) {
	if count == 0 || n == nil {
		return "", false
	}
	v, ok := n.labels[label]
	return v, ok
}

// Schedule bids the pod on every node and decides, explaining the best candidates.
// It does not assume the pod: call Assume with the winner once the bind is sent.
func (c *Cache) Schedule(pod *corev1.Pod, policy *Policy, tieBreak func(int) int) Decision {
	ctx := c.Context(pod, policy)
	c.bids = policy.BidNodes(pod, c.Nodes(), ctx, c.bids[:0])
	d := Decide(pod, c.bids, tieBreak)
	for i := range d.Top {
		d.Top[i] = policy.Explain(pod, c.nodes[d.Top[i].Node], ctx)
	}
	return d
}

func namespace(ns string) string {
	if ns == "" {
		return metav1.NamespaceDefault
	}
	return ns
}

// serviceEntry counts a service's pods per node slot, with a histogram of the
// counts so that the largest is known at once as pods come and go.
type serviceEntry struct {
	key, name string
	selector  []labelPair
	perSlot   []int32
	hist      []int32 // hist[k]: nodes holding k pods of the service, k >= 1
	max       int
	total     int
}

// matches follows today's API: a service without a selector selects no pods.
func (s *serviceEntry) matches(podLabels map[string]string) bool {
	if len(s.selector) == 0 {
		return false
	}
	for _, p := range s.selector {
		if v, ok := podLabels[p.key]; !ok || v != p.value {
			return false
		}
	}
	return true
}

func (s *serviceEntry) inc(slot int) {
	for len(s.perSlot) <= slot {
		s.perSlot = append(s.perSlot, 0)
	}
	k := s.perSlot[slot]
	if k > 0 {
		s.hist[k]--
	}
	k++
	s.perSlot[slot] = k
	for len(s.hist) <= int(k) {
		s.hist = append(s.hist, 0)
	}
	s.hist[k]++
	s.max = max(s.max, int(k))
	s.total++
}

func (s *serviceEntry) dec(slot int) {
	k := s.perSlot[slot]
	s.hist[k]--
	k--
	s.perSlot[slot] = k
	if k > 0 {
		s.hist[k]++
	}
	for s.max > 0 && s.hist[s.max] == 0 {
		s.max--
	}
	s.total--
}
