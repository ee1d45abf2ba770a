package node

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Eviction is a node's request to have its pods deleted.
type Eviction struct {
	Node  string
	Trace string // the trace of the work that asked for it
	Pods  []types.NamespacedName
}

// Evictor paces evictions across every node with one token bucket, which it alone
// owns: each token evicts the pods of one node, in the order the nodes asked. A newer
// request of a node replaces its older one and keeps its place.
type Evictor struct {
	lim     Limiter
	queue   []string // nodes, in the order they asked
	waiting map[string]Eviction
}

// NewEvictor returns an evictor with a full bucket at now.
func NewEvictor(qps float64, burst int, now time.Time) *Evictor {
	return &Evictor{lim: NewLimiter(qps, burst, now), waiting: map[string]Eviction{}}
}

// Request queues ev (or replaces the node's waiting request).
func (e *Evictor) Request(ev Eviction) {
	if _, ok := e.waiting[ev.Node]; !ok {
		e.queue = append(e.queue, ev.Node)
	}
	e.waiting[ev.Node] = ev
}

// Cancel withdraws a node's waiting request (the node is Ready again, or gone).
func (e *Evictor) Cancel(node string) {
	if _, ok := e.waiting[node]; !ok {
		return
	}
	delete(e.waiting, node)
	e.queue = slices.DeleteFunc(e.queue, func(n string) bool { return n == node })
}

// Drain returns the evictions due at now, one per token, and when a token will be
// there for the next waiting one (zero: none waits, or the bucket never refills).
func (e *Evictor) Drain(now time.Time) (due []Eviction, next time.Time) {
	for len(e.queue) > 0 {
		lim, ok := e.lim.Take(now)
		e.lim = lim
		if !ok {
			break
		}
		name := e.queue[0]
		e.queue = e.queue[1:]
		due = append(due, e.waiting[name])
		delete(e.waiting, name)
	}
	if len(e.queue) > 0 {
		next = e.lim.Available(now)
	}
	return due, next
}
