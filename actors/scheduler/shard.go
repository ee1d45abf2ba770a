package scheduler

import (
	"maps"
	"math/bits"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// MaxClasses is the fewest pod classes a Shard keeps; the least recently used goes
// first. A shard of few nodes keeps more, as many as classCells cells allow (a cell
// per node and class) up to maxClassesCap: pods of many replication controllers
// scaling up together arrive in turn, and each controller is its own spread group,
// so its own class (179 of them in the 150,000-pod envelope). A class dropped and
// met again costs a bid on every node.
const MaxClasses = 32

const (
	classCells    = 1 << 21 // 16 bytes each: 32 MiB a shard at most
	maxClassesCap = 1024
)

// classLimit is how many classes a shard of n nodes keeps.
func classLimit(n int) int {
	if n == 0 {
		return maxClassesCap
	}
	return min(maxClassesCap, max(MaxClasses, classCells/n))
}

// Shard decides pods over one shard of the nodes incrementally. Pods of one class
// (the same key, see PodContext.classKey) get the same bid on a node, so for each
// recent class the shard keeps every node's last bid, its fitting nodes bucketed by
// total score and its rejections counted by reason. A decision re-bids only the nodes
// that changed since (Touch), and every node when a cross-node fact the class's scores
// were computed with changed (the largest count of its service or of its spread
// group on a node, its pods per label value, the labels service affinity pins, the
// services and replication controllers themselves).
//
// Decide returns exactly what Decide over a full evaluation of the shard's nodes
// would, the tied node a given tie-break picks included. A Shard has one writer; it
// reads the NodeInfos it is given, so they must not change while SetNodes, Touch or
// Decide runs.
type Shard struct {
	policy      *Policy
	exact       bool // every plugin is this package's: classes are sound
	readsMax    bool // a priority reads MaxPerNode
	readsSpread bool // a priority reads SpreadMax
	readsTotal  bool // a priority reads ServicePods and the counts per label value

	nodes   []*NodeInfo // the shard's nodes by name
	index   []int32     // cache slot -> position in nodes, -1 when not ours
	classes map[string]*class
	list    []*class // the same classes, for Touch and SetNodes to walk
	limit   int      // classes kept, classLimit of the nodes
	clock   uint64   // decisions so far, to find the least recently used class
	bids    uint64   // node bids made so far: what a decision cost

	// Reasons are numbered, so that cells hold no pointer (the garbage collector
	// does not scan them) and take 16 bytes.
	reasonIDs   map[string]int32
	reasonNames []string
}

// class is a pod class's view of the shard.
type class struct {
	key      string
	at       int // in Shard.list
	used     uint64
	valid    bool // cells, buckets and reasons hold the bids made with facts
	facts    facts
	cells    []cell  // by node position
	dirty    []int32 // positions to re-bid before the next decision
	buckets  []*bucket
	reasons  []int32 // nodes rejected, by reason number
	rejected int     // reasons with a node
	feasible int
}

// cell is a node's last bid for the class.
type cell struct {
	score  float64
	reason int32 // Shard.reasonNames, when the node does not fit
	fits   bool
	known  bool // counted in buckets or reasons
	dirty  bool // listed in class.dirty
}

// bucket is the set of fitting nodes with one total score: positions follow names,
// so its members in order are the ties by name. Scores are not whole numbers, so a
// cluster of unlike nodes has many buckets of a few nodes each: a bucket keeps up to
// sparseMax positions sorted, and turns into a bitset over all positions beyond.
type bucket struct {
	score float64
	count int
	pos   []int32  // sorted, while bits is nil
	bits  []uint64 // once more than sparseMax
}

const sparseMax = 8

// add puts position j (of n) in the bucket.
func (bk *bucket) add(j, n int) {
	bk.count++
	if bk.bits == nil && len(bk.pos) < sparseMax {
		i, _ := slices.BinarySearch(bk.pos, int32(j))
		bk.pos = slices.Insert(bk.pos, i, int32(j))
		return
	}
	if bk.bits == nil {
		bk.bits = make([]uint64, (n+63)/64)
		for _, p := range bk.pos {
			bk.bits[p/64] |= 1 << (p % 64)
		}
		bk.pos = nil
	}
	bk.bits[j/64] |= 1 << (j % 64)
}

// remove takes position j out of the bucket.
func (bk *bucket) remove(j int) {
	bk.count--
	if bk.bits != nil {
		bk.bits[j/64] &^= 1 << (j % 64)
		return
	}
	if i, ok := slices.BinarySearch(bk.pos, int32(j)); ok {
		bk.pos = slices.Delete(bk.pos, i, i+1)
	}
}

// each calls f with the bucket's positions in order until f returns false.
func (bk *bucket) each(f func(j int) bool) {
	if bk.bits == nil {
		for _, p := range bk.pos {
			if !f(int(p)) {
				return
			}
		}
		return
	}
	for w, word := range bk.bits {
		for ; word != 0; word &= word - 1 {
			if !f(w*64 + bits.TrailingZeros64(word)) {
				return
			}
		}
	}
}

// facts are what a class's scores read beyond one node.
type facts struct {
	services    uint64
	maxPerNode  int
	spreadMax   int
	servicePods int
	labelCounts map[string]map[string]int
	affinity    map[string]string
}

// NewShard returns a shard without nodes that decides with the policy. A plugin
// this package does not know (exact false) may read anything of the pod, so every
// decision then re-bids every node: each plugin of this package must be listed here
// (TestShardRebidsChangedNodesOnly checks that every one a policy can name is).
func NewShard(policy *Policy) *Shard {
	s := &Shard{policy: policy, exact: true, classes: make(map[string]*class), limit: classLimit(0),
		reasonIDs: make(map[string]int32)}
	for _, p := range policy.Predicates {
		switch p.(type) {
		case VolumeClaimsBound, PodFitsHostPorts, PodFitsResources, NoDiskConflict, MatchNodeSelector, HostName,
			CheckNodeLabelPresence, CheckServiceAffinity:
		default:
			s.exact = false
		}
	}
	for _, w := range policy.Priorities {
		switch w.Priority.(type) {
		case ServiceSpreadingPriority:
			s.readsMax = s.readsMax || w.Weight != 0
		case SelectorSpreadPriority:
			s.readsSpread = s.readsSpread || w.Weight != 0
		case ServiceAntiAffinity:
			s.readsTotal = s.readsTotal || w.Weight != 0
		case LeastRequestedPriority, BalancedResourceAllocation, NodeLabelPriority, EqualPriority:
		default:
			s.exact = false
		}
	}
	return s
}

// SetNodes replaces the shard's nodes (by name, as Cache.Shards gives them). Bids of
// nodes kept stay; new nodes are bid at the next decision of each class.
func (s *Shard) SetNodes(nodes []*NodeInfo) {
	old := make(map[*NodeInfo]int32, len(s.nodes))
	for i, n := range s.nodes {
		old[n] = int32(i)
	}
	s.nodes = nodes
	s.limit = classLimit(len(nodes))
	s.index = s.index[:0]
	for i, n := range nodes {
		for len(s.index) <= n.slot {
			s.index = append(s.index, -1)
		}
		s.index[n.slot] = int32(i)
	}
	for _, c := range s.list {
		cells := make([]cell, len(nodes))
		c.dirty = c.dirty[:0]
		for j, n := range nodes {
			if i, ok := old[n]; ok {
				cells[j] = c.cells[i]
			}
			if !cells[j].known || cells[j].dirty {
				cells[j].dirty = true
				c.dirty = append(c.dirty, int32(j))
			}
		}
		c.cells = cells
		c.recount()
	}
}

// Touch marks changed nodes for a re-bid in every class; nodes of other shards are
// ignored. Pass every node Cache.Changes returns.
func (s *Shard) Touch(changed []*NodeInfo) {
	for _, n := range changed {
		if n.slot < 0 || n.slot >= len(s.index) {
			continue
		}
		j := s.index[n.slot]
		if j < 0 || s.nodes[j] != n {
			continue
		}
		for _, c := range s.list {
			if x := &c.cells[j]; !x.dirty {
				x.dirty = true
				c.dirty = append(c.dirty, j)
			}
		}
	}
}

// Decide decides the pod over the shard's nodes; ctx must be the pod's. tieBreak is
// called as Decide calls it: once, with the number of tied nodes, when more than one.
func (s *Shard) Decide(pod *corev1.Pod, ctx *PodContext, tieBreak func(n int) int) Decision {
	s.clock++
	c := s.class(ctx.class)
	c.used = s.clock
	f := s.factsOf(ctx)
	var b Bid
	if !c.valid || !s.exact || !c.facts.equal(&f) {
		c.facts, c.valid = f, true
		c.reset(len(s.nodes))
		for j, n := range s.nodes {
			s.policy.bid(&b, pod, n, ctx)
			c.set(j, &b, s.reason(&b))
		}
		s.bids += uint64(len(s.nodes))
	} else {
		for _, j := range c.dirty {
			s.policy.bid(&b, pod, s.nodes[j], ctx)
			c.set(int(j), &b, s.reason(&b))
		}
		s.bids += uint64(len(c.dirty))
	}
	c.dirty = c.dirty[:0]
	return s.decision(c, pod, tieBreak)
}

// reason numbers the reason of a bid that does not fit.
func (s *Shard) reason(b *Bid) int32 {
	if b.Fits {
		return 0
	}
	id, ok := s.reasonIDs[b.Reason]
	if !ok {
		id = int32(len(s.reasonNames))
		s.reasonIDs[b.Reason] = id
		s.reasonNames = append(s.reasonNames, b.Reason)
	}
	return id
}

// class returns the class's state, making room for a new one if need be.
func (s *Shard) class(key string) *class {
	if c, ok := s.classes[key]; ok {
		return c
	}
	for len(s.list) >= s.limit {
		oldest := s.list[0]
		for _, c := range s.list[1:] {
			if c.used < oldest.used {
				oldest = c
			}
		}
		delete(s.classes, oldest.key)
		last := s.list[len(s.list)-1]
		s.list[oldest.at], last.at = last, oldest.at
		s.list[len(s.list)-1] = nil
		s.list = s.list[:len(s.list)-1]
	}
	c := &class{key: key, at: len(s.list)}
	s.classes[key] = c
	s.list = append(s.list, c)
	return c
}

func (s *Shard) factsOf(ctx *PodContext) facts {
	f := facts{services: ctx.services, affinity: ctx.affinity}
	if s.readsMax {
		f.maxPerNode = ctx.MaxPerNode
	}
	if s.readsSpread {
		f.spreadMax = ctx.SpreadMax
	}
	if s.readsTotal {
		f.servicePods, f.labelCounts = ctx.ServicePods, ctx.labelCounts
	}
	return f
}

func (f *facts) equal(g *facts) bool {
	if f.services != g.services || f.maxPerNode != g.maxPerNode || f.spreadMax != g.spreadMax || f.servicePods != g.servicePods ||
		!maps.Equal(f.affinity, g.affinity) || len(f.labelCounts) != len(g.labelCounts) {
		return false
	}
	for l, m := range f.labelCounts {
		if !maps.Equal(m, g.labelCounts[l]) {
			return false
		}
	}
	return true
}

// decision reads the class's counts: the best bucket gives the score, the ties and,
// through tieBreak, the winner; the buckets in order give the top candidates.
func (s *Shard) decision(c *class, pod *corev1.Pod, tieBreak func(int) int) Decision {
	d := Decision{Pod: PodKey(pod), Nodes: len(s.nodes), Feasible: c.feasible}
	if c.rejected > 0 {
		d.Reasons = make(map[string]int, c.rejected)
		for id, k := range c.reasons {
			if k > 0 {
				d.Reasons[s.reasonNames[id]] = int(k)
			}
		}
	}
	if len(c.buckets) == 0 {
		return d
	}
	best := c.buckets[0]
	d.Score, d.Ties = best.score, best.count
	d.Node = s.nodes[best.nth(pick(tieBreak, best.count))].name
	d.Top = make([]Bid, 0, MaxTop)
	for _, bk := range c.buckets {
		bk.each(func(j int) bool {
			d.Top = append(d.Top, Bid{Node: s.nodes[j].name, Fits: true, Score: bk.score})
			return len(d.Top) < MaxTop
		})
		if len(d.Top) == MaxTop {
			break
		}
	}
	return d
}

// reset forgets every bid, for n nodes.
func (c *class) reset(n int) {
	c.cells = make([]cell, n)
	c.dirty = c.dirty[:0]
	c.recount()
}

// recount rebuilds buckets, reasons and the feasible count from the known cells.
func (c *class) recount() {
	c.buckets, c.reasons, c.rejected, c.feasible = nil, nil, 0, 0
	for j := range c.cells {
		if c.cells[j].known {
			c.count(j, &c.cells[j])
		}
	}
}

// set records a node's new bid (its reason numbered) in place of its last one.
func (c *class) set(j int, b *Bid, reason int32) {
	x := &c.cells[j]
	if x.known {
		c.uncount(j, x)
	}
	*x = cell{score: b.Score, reason: reason, fits: b.Fits, known: true}
	c.count(j, x)
}

func (c *class) count(j int, x *cell) {
	if !x.fits {
		for int(x.reason) >= len(c.reasons) {
			c.reasons = append(c.reasons, 0)
		}
		if c.reasons[x.reason]++; c.reasons[x.reason] == 1 {
			c.rejected++
		}
		return
	}
	c.feasible++
	i := c.find(x.score)
	if i == len(c.buckets) || c.buckets[i].score != x.score {
		bk := &bucket{score: x.score}
		c.buckets = append(c.buckets, nil)
		copy(c.buckets[i+1:], c.buckets[i:])
		c.buckets[i] = bk
	}
	c.buckets[i].add(j, len(c.cells))
}

func (c *class) uncount(j int, x *cell) {
	if !x.fits {
		if c.reasons[x.reason]--; c.reasons[x.reason] == 0 {
			c.rejected--
		}
		return
	}
	c.feasible--
	i := c.find(x.score)
	if i == len(c.buckets) || c.buckets[i].score != x.score {
		return // cannot happen: a counted cell has its bucket
	}
	bk := c.buckets[i]
	if bk.remove(j); bk.count == 0 {
		c.buckets = append(c.buckets[:i], c.buckets[i+1:]...)
	}
}

// find returns the position of the bucket of score, or where it would go: buckets
// are by score, best first. Scores are not whole numbers, so there may be many.
func (c *class) find(score float64) int {
	lo, hi := 0, len(c.buckets)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.buckets[m].score > score {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// nth returns the k-th position (from 0), k < count.
func (bk *bucket) nth(k int) int {
	if bk.bits == nil {
		return int(bk.pos[k])
	}
	for w, word := range bk.bits {
		if n := bits.OnesCount64(word); k >= n {
			k -= n
			continue
		}
		for ; k > 0; k-- {
			word &= word - 1
		}
		return w*64 + bits.TrailingZeros64(word)
	}
	return -1 // cannot happen: k < count
}
