package scheduler

import (
	"container/heap"
	"maps"
	"slices"
	"time"
)

// Backoff of an unschedulable pod: BackoffInitial after its first failed decision,
// doubling per failure up to BackoffMax.
const (
	BackoffInitial = time.Second
	BackoffMax     = 60 * time.Second
)

// Queue holds the pods waiting for a decision: those queued to be decided now, first
// come first served, and those backing off after a failed decision. Its methods take
// the time as a value and return when the next retry is due; the caller arms the
// timer. Pods are named by their PodKey.
type Queue struct {
	fifo    []string
	pending map[string]*queued // queued or backing off
	backoff map[string]*queued // the pending pods backing off
	// due orders the backoffs by their end (then key), so that RetryDue looks only at
	// the ones that ended. An entry whose pod left the backoff, or backed off again
	// since, is stale: it is skipped when it comes to the top.
	due retries
}

// retry is a backoff's end as it was when the pod backed off.
type retry struct {
	key string
	at  time.Time
}

// retries is a min-heap of backoff ends (container/heap).
type retries []retry

func (h retries) Len() int { return len(h) }
func (h retries) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].key < h[j].key
}
func (h retries) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *retries) Push(x any)   { *h = append(*h, x.(retry)) }
func (h *retries) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// stale tells whether a heap entry no longer stands for a backoff.
func (q *Queue) stale(r retry) bool {
	e := q.backoff[r.key]
	return e == nil || !e.retryAt.Equal(r.at)
}

type queued struct {
	queued   bool
	attempts int
	retryAt  time.Time
}

// NewQueue returns an empty queue.
func NewQueue() *Queue {
	return &Queue{pending: make(map[string]*queued), backoff: make(map[string]*queued)}
}

// Add queues a pod for a decision now, ending any backoff. A pod queued already keeps
// its place.
func (q *Queue) Add(key string) {
	e := q.pending[key]
	if e == nil {
		e = &queued{}
		q.pending[key] = e
	}
	q.endBackoff(key)
	e.retryAt = time.Time{}
	if !e.queued {
		e.queued = true
		q.fifo = append(q.fifo, key)
	}
}

// Pending tells whether a pod waits for a decision (queued, being decided or backing
// off).
func (q *Queue) Pending(key string) bool {
	_, ok := q.pending[key]
	return ok
}

// Len counts the pending pods.
func (q *Queue) Len() int { return len(q.pending) }

// Keys returns the pending pods, sorted.
func (q *Queue) Keys() []string { return slices.Sorted(maps.Keys(q.pending)) }

// Drop forgets a pod: it was bound, deleted or is no longer ours to place.
func (q *Queue) Drop(key string) {
	delete(q.pending, key)
	q.endBackoff(key)
}

// endBackoff takes a pod out of the backoff; when none is left, the heap's entries
// are all stale and go with it.
func (q *Queue) endBackoff(key string) {
	delete(q.backoff, key)
	if len(q.backoff) == 0 {
		q.due = nil
	}
}

// Pop takes the first queued pod to decide. The pod stays pending until it is dropped
// or backs off.
func (q *Queue) Pop() (string, bool) {
	for len(q.fifo) > 0 {
		key := q.fifo[0]
		q.fifo[0] = ""
		q.fifo = q.fifo[1:]
		e := q.pending[key]
		if e == nil || !e.queued {
			continue
		}
		e.queued = false
		return key, true
	}
	return "", false
}

// Unschedulable backs a pod off after a failed decision at now and returns when it is
// to be retried and how many decisions failed in a row.
func (q *Queue) Unschedulable(key string, now time.Time) (retryAt time.Time, attempts int) {
	e := q.pending[key]
	if e == nil {
		e = &queued{}
		q.pending[key] = e
	}
	e.attempts++
	delay := BackoffInitial << min(e.attempts-1, 6)
	e.retryAt = now.Add(min(delay, BackoffMax))
	q.backoff[key] = e
	heap.Push(&q.due, retry{key: key, at: e.retryAt})
	return e.retryAt, e.attempts
}

// RetryAll queues every backing-off pod at once: a node came or changed, or a pod
// left.
func (q *Queue) RetryAll() {
	for _, key := range slices.Sorted(maps.Keys(q.backoff)) {
		q.Add(key)
	}
	q.due = nil // no backoff runs any more
}

// RetryDue queues the pods whose backoff ended by now, earliest end first, and
// returns when the next backoff ends, or the zero time when no pod backs off. It
// costs the number of backoffs that ended, not of those still running.
func (q *Queue) RetryDue(now time.Time) (next time.Time) {
	for len(q.due) > 0 {
		top := q.due[0]
		if q.stale(top) {
			heap.Pop(&q.due)
			continue
		}
		if top.at.After(now) {
			return top.at
		}
		heap.Pop(&q.due)
		q.Add(top.key)
	}
	q.due = nil // every entry popped: let the array go
	return time.Time{}
}
