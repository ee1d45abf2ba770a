package scheduler

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Bid is one node's answer for one pod: whether it fits and, if so, its total score
// (Σ weight × score). A node that does not fit gives the reason of the first
// predicate it failed, as v1.0 does.
type Bid struct {
	Node   string          `json:"node"`
	Fits   bool            `json:"fits"`
	Reason string          `json:"reason,omitempty"`
	Score  float64         `json:"score"`
	Scores []PriorityScore `json:"scores,omitempty"` // filled by Explain only
}

// PriorityScore is one priority's part of a total.
type PriorityScore struct {
	Name   string  `json:"name"`
	Weight int64   `json:"weight"`
	Score  float64 `json:"score"`
}

// Bid evaluates the pod on one node. It allocates nothing; ctx must be the pod's
// (NewPodContext or Cache.Context).
func (p *Policy) Bid(pod *corev1.Pod, n *NodeInfo, ctx *PodContext) Bid {
	var b Bid
	p.bid(&b, pod, n, ctx)
	return b
}

// bid fills *b in place: bids are written straight into the caller's slice.
func (p *Policy) bid(b *Bid, pod *corev1.Pod, n *NodeInfo, ctx *PodContext) {
	*b = Bid{Node: n.name}
	if !n.eligible {
		b.Reason = n.reason
		return
	}
	for _, pr := range p.Predicates {
		if ok, why := pr.Fits(pod, n, ctx); !ok {
			b.Reason = why
			return
		}
	}
	b.Fits = true
	if len(p.Priorities) == 0 {
		b.Score = EqualPriority{}.Score(pod, n, ctx)
		return
	}
	for i := range p.Priorities {
		w := &p.Priorities[i]
		if w.Weight != 0 {
			b.Score += float64(w.Weight) * w.Priority.Score(pod, n, ctx)
		}
	}
}

// Explain is Bid with the per-priority breakdown, for the decision record.
func (p *Policy) Explain(pod *corev1.Pod, n *NodeInfo, ctx *PodContext) Bid {
	b := p.Bid(pod, n, ctx)
	if !b.Fits {
		return b
	}
	if len(p.Priorities) == 0 {
		b.Scores = []PriorityScore{{Name: "EqualPriority", Weight: 1, Score: b.Score}}
		return b
	}
	for _, w := range p.Priorities {
		if w.Weight != 0 {
			b.Scores = append(b.Scores, PriorityScore{Name: w.Name, Weight: w.Weight, Score: w.Priority.Score(pod, n, ctx)})
		}
	}
	return b
}

// BidNodes appends the bids of the given nodes to dst, in node order. Pass a
// reused dst to bid without allocating.
func (p *Policy) BidNodes(pod *corev1.Pod, nodes []*NodeInfo, ctx *PodContext, dst []Bid) []Bid {
	k := len(dst)
	dst = slices.Grow(dst, len(nodes))[:k+len(nodes)]
	for i, n := range nodes {
		p.bid(&dst[k+i], pod, n, ctx)
	}
	return dst
}

// MaxTop is how many of the best bids a Decision keeps to explain itself.
const MaxTop = 5

// Decision is the outcome for one pod over a set of nodes: the winner (empty when no
// node fits), why the others were rejected, and the best candidates. Decisions over
// disjoint shards of nodes combine with Merge into the decision over all of them.
type Decision struct {
	Pod      string         `json:"pod"`
	Node     string         `json:"node,omitempty"`
	Score    float64        `json:"score,omitempty"`
	Ties     int            `json:"ties,omitempty"` // fitting nodes that share the best score
	Nodes    int            `json:"nodes"`
	Feasible int            `json:"feasible"`
	Reasons  map[string]int `json:"reasons,omitempty"` // reason -> number of nodes
	Top      []Bid          `json:"top,omitempty"`     // best first, ties by node name
}

// Decide picks the highest total among the bids that fit. tieBreak(n) returns an
// index in [0, n) choosing among n nodes tied for the best score; v1.0 picks at
// random, so pass a seeded rand.Rand's Intn. It is called once, only when a node fits.
func Decide(pod *corev1.Pod, bids []Bid, tieBreak func(n int) int) Decision {
	d := Decision{Pod: PodKey(pod), Nodes: len(bids)}
	for i := range bids {
		b := &bids[i]
		if !b.Fits {
			if d.Reasons == nil {
				d.Reasons = make(map[string]int)
			}
			d.Reasons[b.Reason]++
			continue
		}
		d.Feasible++
		switch {
		case d.Ties == 0 || b.Score > d.Score:
			d.Score, d.Ties = b.Score, 1
		case b.Score == d.Score:
			d.Ties++
		}
		d.addTop(b)
	}
	if d.Ties == 0 {
		return d
	}
	k := pick(tieBreak, d.Ties)
	for i := range bids {
		if bids[i].Fits && bids[i].Score == d.Score {
			if k == 0 {
				d.Node = bids[i].Node
				break
			}
			k--
		}
	}
	return d
}

// Merge combines decisions for the same pod over disjoint sets of nodes. Among
// winners tied on score, each of the Ties nodes behind them stays equally likely.
// It may reuse a's maps and slices.
func Merge(a, b Decision, tieBreak func(n int) int) Decision {
	if a.Pod == "" {
		a.Pod = b.Pod
	}
	a.Nodes += b.Nodes
	a.Feasible += b.Feasible
	for r, c := range b.Reasons {
		if a.Reasons == nil {
			a.Reasons = make(map[string]int, len(b.Reasons))
		}
		a.Reasons[r] += c
	}
	for i := range b.Top {
		a.addTop(&b.Top[i])
	}
	switch {
	case b.Ties == 0:
	case a.Ties == 0 || b.Score > a.Score:
		a.Node, a.Score, a.Ties = b.Node, b.Score, b.Ties
	case b.Score == a.Score:
		if pick(tieBreak, a.Ties+b.Ties) >= a.Ties {
			a.Node = b.Node
		}
		a.Ties += b.Ties
	}
	return a
}

func pick(tieBreak func(int) int, n int) int {
	if n == 1 || tieBreak == nil {
		return 0
	}
	k := tieBreak(n)
	if k < 0 || k >= n {
		k = ((k % n) + n) % n
	}
	return k
}

// addTop keeps the MaxTop best bids, best first and ties by node name.
func (d *Decision) addTop(b *Bid) {
	if len(d.Top) == MaxTop && !better(b, &d.Top[MaxTop-1]) {
		return
	}
	if d.Top == nil {
		d.Top = make([]Bid, 0, MaxTop)
	}
	i := len(d.Top)
	for i > 0 && better(b, &d.Top[i-1]) {
		i--
	}
	if len(d.Top) < MaxTop {
		d.Top = append(d.Top, Bid{})
	}
	copy(d.Top[i+1:], d.Top[i:len(d.Top)-1])
	d.Top[i] = *b
}

func better(x, y *Bid) bool {
	if x.Score != y.Score {
		return x.Score > y.Score
	}
	return x.Node < y.Node
}

// FailedSchedulingMessage words a decision without a winner as kube-scheduler's
// FailedScheduling event: "0/3 nodes are available: 2 Insufficient cpu, 1 node(s)
// didn't match node selector." Reasons go by count, most frequent first.
func FailedSchedulingMessage(d Decision) string {
	if d.Nodes == 0 {
		return "no nodes available to schedule pods"
	}
	type rc struct {
		reason string
		count  int
	}
	rs := make([]rc, 0, len(d.Reasons))
	for r, c := range d.Reasons {
		rs = append(rs, rc{r, c})
	}
	sort.Slice(rs, func(i, j int) bool {
		return rs[i].count > rs[j].count || rs[i].count == rs[j].count && rs[i].reason < rs[j].reason
	})
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%d %s", r.count, r.reason)
	}
	return fmt.Sprintf("%d/%d nodes are available: %s.", d.Feasible, d.Nodes, strings.Join(parts, ", "))
}

// ScheduledMessage words a decision with a winner as v1.0's kube-scheduler words its
// Scheduled event, with the pod's name (the event's involvedObject has its
// namespace): "Successfully assigned redis-master-bobr0 to kubernetes-minion1".
func ScheduledMessage(d Decision) string {
	name := d.Pod[strings.LastIndex(d.Pod, "/")+1:]
	return fmt.Sprintf("Successfully assigned %s to %s", name, d.Node)
}

// TieBreak returns the tie-break of one pod's decision: numbers drawn from a stream
// seeded by a hash of the pod's key (PodKey) and salt (one per shard). The same pod
// facing the same ties gets the same node, across runs and restarts; different pods
// facing the same ties get different nodes, uniformly. Spreading never relies on it:
// the scores tell emptier nodes apart.
func TieBreak(key string, salt uint64) func(n int) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	x := h.Sum64() ^ (salt * 0x9e3779b97f4a7c15)
	return func(n int) int {
		x += 0x9e3779b97f4a7c15 // splitmix64
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return int(z % uint64(n))
	}
}
