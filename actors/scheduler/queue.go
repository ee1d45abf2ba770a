package scheduler

import (
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
	delete(q.backoff, key)
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
	delete(q.backoff, key)
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
	return e.retryAt, e.attempts
}

// RetryAll queues every backing-off pod at once: a node came or changed, or a pod
// left.
func (q *Queue) RetryAll() {
	for _, key := range slices.Sorted(maps.Keys(q.backoff)) {
		q.Add(key)
	}
}

// RetryDue queues the pods whose backoff ended by now and returns when the next
// backoff ends, or the zero time when no pod backs off.
func (q *Queue) RetryDue(now time.Time) (next time.Time) {
	for _, key := range slices.Sorted(maps.Keys(q.backoff)) {
		e := q.backoff[key]
		if !e.retryAt.After(now) {
			q.Add(key)
		} else if next.IsZero() || e.retryAt.Before(next) {
			next = e.retryAt
		}
	}
	return next
}
