package scheduler

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	inNS     map[string]map[string]*cachedPod // namespace -> its entries of pods, for count
	assumed  map[string]time.Time
	services map[string][]*serviceEntry // namespace -> services by name
	rcs      map[string][]*serviceEntry // namespace -> replication controllers by name
	groups   map[string][]*serviceEntry // namespace -> spread groups of several selectors
	svcGen   uint64                     // bumped by every service or controller change
	changed  []*NodeInfo                // nodes changed since the last Changes
	bids     []Bid                      // reused by Schedule
}

// cachedPod is what the cache needs of a counted pod: not the pod itself, which would
// keep every pod of the cluster decoded in memory (persistence keeps a pod no one
// reads as its JSON alone).
type cachedPod struct {
	uid       types.UID
	namespace string
	labels    map[string]string // the pod's own map: shared, never modified
	node      string
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{
		nodes:    make(map[string]*NodeInfo),
		pods:     make(map[string]*cachedPod),
		inNS:     make(map[string]map[string]*cachedPod),
		assumed:  make(map[string]time.Time),
		services: make(map[string][]*serviceEntry),
		rcs:      make(map[string][]*serviceEntry),
		groups:   make(map[string][]*serviceEntry),
	}
}

// SetNode adds or updates a node, keeping the pods counted on it.
func (c *Cache) SetNode(node *corev1.Node) {
	if n, ok := c.nodes[node.Name]; ok {
		if n.node == nil {
			c.sorted = nil
		}
		was, labels := n.facts(), n.labels
		n.SetNode(node)
		if was.node && n.facts() == was && maps.Equal(labels, n.labels) {
			return // a heartbeat: nothing a decision reads changed, no shard re-bids it
		}
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
	if cp, ok := c.pods[key]; ok && sameCounts(cp, pod) && c.nodes[cp.node].replacePod(key, pod) {
		// A newer version that counts the same on the same node (a status write, the
		// binding observed after the assumption): nothing the decisions read changed,
		// so the node is not touched and no shard re-bids it.
		cp.labels = pod.Labels
		delete(c.assumed, key)
		return
	}
	c.remove(key)
	delete(c.assumed, key)
	if podpkg.Terminal(pod) {
		return
	}
	c.add(key, pod, pod.Spec.NodeName)
}

// sameCounts tells whether pod, a newer version of the cached cp, is counted by the
// same services and controllers on the same node: the same pod (uid) with the same
// labels, still holding its room. NodeInfo.replacePod checks what the node counts.
func sameCounts(cp *cachedPod, pod *corev1.Pod) bool {
	return cp.uid == pod.UID && cp.node == pod.Spec.NodeName && !podpkg.Terminal(pod) &&
		maps.Equal(cp.labels, pod.Labels)
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
	cp := &cachedPod{uid: pod.UID, namespace: pod.Namespace, labels: pod.Labels, node: node}
	c.pods[key] = cp
	ns := namespace(pod.Namespace)
	if c.inNS[ns] == nil {
		c.inNS[ns] = make(map[string]*cachedPod)
	}
	c.inNS[ns][key] = cp
	for _, list := range [...][]*serviceEntry{c.services[ns], c.rcs[ns], c.groups[ns]} {
		for _, s := range list {
			if s.matches(pod.Labels) {
				s.inc(n.slot)
			}
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
	ns := namespace(p.namespace)
	if delete(c.inNS[ns], key); len(c.inNS[ns]) == 0 {
		delete(c.inNS, ns)
	}
	for _, list := range [...][]*serviceEntry{c.services[ns], c.rcs[ns], c.groups[ns]} {
		for _, s := range list {
			if s.matches(p.labels) {
				s.dec(n.slot)
			}
		}
	}
	if n.node == nil && len(n.pods) == 0 {
		c.unplace(n)
	}
}

// SetService adds or updates a service and recounts its pods.
func (c *Cache) SetService(svc *corev1.Service) {
	ns := namespace(svc.Namespace)
	c.setEntry(c.services, ns, svc.Name, ns+"/"+svc.Name, svc.Spec.Selector)
}

// RemoveService forgets a service.
func (c *Cache) RemoveService(ns, name string) { c.removeEntry(c.services, namespace(ns), name) }

// SetController adds or updates a replication controller, whose selector groups pods
// for SelectorSpreadPriority. An update that keeps the selector (a status write)
// changes nothing.
func (c *Cache) SetController(rc *corev1.ReplicationController) {
	ns := namespace(rc.Namespace)
	c.setEntry(c.rcs, ns, rc.Name, ns+"/replicationcontrollers/"+rc.Name, rc.Spec.Selector)
}

// RemoveController forgets a replication controller.
func (c *Cache) RemoveController(ns, name string) { c.removeEntry(c.rcs, namespace(ns), name) }

func (c *Cache) setEntry(entries map[string][]*serviceEntry, ns, name, key string, selector map[string]string) {
	pairs := sortedPairs(selector)
	for _, e := range entries[ns] {
		if e.name == name && slices.Equal(e.selector, pairs) {
			return
		}
	}
	c.removeEntry(entries, ns, name)
	c.changedSelectors()
	s := &serviceEntry{key: key, name: name, selector: pairs}
	c.count(s, ns)
	list := append(entries[ns], s)
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	entries[ns] = list
}

func (c *Cache) removeEntry(entries map[string][]*serviceEntry, ns, name string) {
	list := entries[ns]
	for i, s := range list {
		if s.name == name {
			c.changedSelectors()
			entries[ns] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// changedSelectors notes that a service or controller came, went or changed: the
// classes' cross-node facts are stale and the spread groups are rebuilt on demand.
func (c *Cache) changedSelectors() {
	c.svcGen++
	clear(c.groups)
}

// count counts the cached pods of namespace ns that s selects.
func (c *Cache) count(s *serviceEntry, ns string) {
	for _, p := range c.inNS[ns] {
		if s.matches(p.labels) {
			s.inc(c.nodes[p.node].slot)
		}
	}
}

// spreadGroup returns the entry counting the pods of the pod's group: those that any
// service or controller selecting the pod selects. Nil when none selects it.
func (c *Cache) spreadGroup(pod *corev1.Pod) *serviceEntry {
	ns := namespace(pod.Namespace)
	var buf [4]*serviceEntry
	members := buf[:0]
	for _, list := range [...][]*serviceEntry{c.services[ns], c.rcs[ns]} {
		for _, e := range list {
			if e.matches(pod.Labels) {
				members = append(members, e)
			}
		}
	}
	switch len(members) {
	case 0:
		return nil
	case 1:
		return members[0]
	}
	for _, g := range c.groups[ns] {
		if slices.Equal(g.members, members) {
			return g
		}
	}
	keys := make([]string, len(members))
	for i, m := range members {
		keys[i] = m.key
	}
	key := strings.Join(keys, "|")
	g := &serviceEntry{key: key, name: key, members: slices.Clone(members)}
	for _, m := range members {
		g.anyOf = append(g.anyOf, m.selector)
	}
	c.count(g, ns)
	c.groups[ns] = append(c.groups[ns], g)
	return g
}

// Context builds the pod's PodContext with what the policy needs from other nodes:
// the spread of its first service (services by name, as v1.0 uses the first), the
// service's pods per value of each anti-affinity label, and the label values that
// service affinity pins. It stays valid until the cache next changes.
func (c *Cache) Context(pod *corev1.Pod, policy *Policy) *PodContext {
	ctx := NewPodContext(pod)
	ctx.services = c.svcGen
	if g := c.spreadGroup(pod); g != nil {
		ctx.Spread, ctx.SpreadPods, ctx.SpreadMax, ctx.spreadPerSlot = g.key, g.total, g.max, g.perSlot
	}
	var s *serviceEntry
	for _, e := range c.services[namespace(pod.Namespace)] {
		if e.matches(pod.Labels) {
			s = e
			break
		}
	}
	if s == nil {
		if ctx.Spread != "" {
			ctx.class = ctx.classKey()
		}
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

// serviceEntry counts the pods a selector selects (a service's, a replication
// controller's, or any of several for a spread group) per node slot, with a histogram
// of the counts so that the largest is known at once as pods come and go.
type serviceEntry struct {
	key, name string
	selector  []labelPair
	anyOf     [][]labelPair   // a spread group: pods any of these select
	members   []*serviceEntry // a spread group: the entries whose selectors anyOf holds
	perSlot   []int32
	hist      []int32 // hist[k]: nodes holding k pods of the service, k >= 1
	max       int
	total     int
}

// matches follows today's API: a service without a selector selects no pods.
func (s *serviceEntry) matches(podLabels map[string]string) bool {
	if s.anyOf != nil {
		for _, sel := range s.anyOf {
			if selects(sel, podLabels) {
				return true
			}
		}
		return false
	}
	return selects(s.selector, podLabels)
}

func selects(selector []labelPair, podLabels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for _, p := range selector {
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
