package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// popAll pops every queued pod, in order.
func popAll(q *Queue) []string {
	var keys []string
	for {
		k, ok := q.Pop()
		if !ok {
			return keys
		}
		keys = append(keys, k)
	}
}

func TestQueueOrder(t *testing.T) {
	tests := []struct {
		name    string
		steps   func(q *Queue)
		pop     []string // popped afterwards, in order
		pending []string // pending after the pops
	}{
		{name: "first come first served", steps: func(q *Queue) {
			q.Add("ns/b")
			q.Add("ns/a")
		}, pop: []string{"ns/b", "ns/a"}, pending: []string{"ns/a", "ns/b"}},
		{name: "added twice keeps its place", steps: func(q *Queue) {
			q.Add("ns/a")
			q.Add("ns/b")
			q.Add("ns/a")
		}, pop: []string{"ns/a", "ns/b"}, pending: []string{"ns/a", "ns/b"}},
		{name: "dropped is skipped", steps: func(q *Queue) {
			q.Add("ns/a")
			q.Add("ns/b")
			q.Drop("ns/a")
		}, pop: []string{"ns/b"}, pending: []string{"ns/b"}},
		{name: "dropped and added again comes once", steps: func(q *Queue) {
			q.Add("ns/a")
			q.Drop("ns/a")
			q.Add("ns/a")
		}, pop: []string{"ns/a"}, pending: []string{"ns/a"}},
		{name: "backing off is not queued", steps: func(q *Queue) {
			q.Add("ns/a")
			q.Pop()
			q.Unschedulable("ns/a", t0)
		}, pending: []string{"ns/a"}},
		{name: "retry all queues the backing-off pods in key order", steps: func(q *Queue) {
			q.Unschedulable("ns/b", t0)
			q.Unschedulable("ns/a", t0)
			q.RetryAll()
		}, pop: []string{"ns/a", "ns/b"}, pending: []string{"ns/a", "ns/b"}},
		{name: "add ends a backoff", steps: func(q *Queue) {
			q.Unschedulable("ns/a", t0)
			q.Add("ns/a")
			q.Pop()
			q.RetryAll()
		}, pending: []string{"ns/a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue()
			tc.steps(q)
			if got := popAll(q); !slices.Equal(got, tc.pop) {
				t.Errorf("popped %q, want %q", got, tc.pop)
			}
			if got := q.Keys(); !slices.Equal(got, tc.pending) {
				t.Errorf("pending %q, want %q", got, tc.pending)
			}
			for _, k := range tc.pending {
				if !q.Pending(k) {
					t.Errorf("Pending(%s) false", k)
				}
			}
		})
	}
}

func TestQueueBackoff(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		want     time.Duration // after the last failure
	}{
		{name: "first failure", failures: 1, want: time.Second},
		{name: "doubles", failures: 3, want: 4 * time.Second},
		{name: "seventh", failures: 7, want: 60 * time.Second},
		{name: "capped", failures: 20, want: BackoffMax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue()
			var at time.Time
			var attempts int
			for i := 0; i < tc.failures; i++ {
				at, attempts = q.Unschedulable("ns/a", t0)
			}
			if got := at.Sub(t0); got != tc.want || attempts != tc.failures {
				t.Fatalf("retry after %v (attempt %d), want %v (attempt %d)", got, attempts, tc.want, tc.failures)
			}
		})
	}
}

func TestQueueRetryDue(t *testing.T) {
	tests := []struct {
		name     string
		at       time.Duration // after t0
		popped   []string
		wantNext time.Duration // after t0; -1 for none
	}{
		{name: "none due", at: 0, wantNext: time.Second},
		{name: "the first due", at: time.Second, popped: []string{"ns/a"}, wantNext: 2 * time.Second},
		{name: "all due", at: time.Minute, popped: []string{"ns/a", "ns/b"}, wantNext: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue()
			q.Unschedulable("ns/a", t0) // due at 1s
			q.Unschedulable("ns/b", t0) // 1s
			q.Unschedulable("ns/b", t0) // 2s
			checkRetryDue(t, q, tc.at, tc.popped, tc.wantNext)
		})
	}
}

// A backoff that ended early (the pod was queued again, dropped, or backed off again
// since) is not ended a second time when its old end comes.
func TestQueueRetryDueSkipsEndedBackoffs(t *testing.T) {
	tests := []struct {
		name     string
		change   func(q *Queue) // after ns/a and ns/b backed off once at t0 (both due at 1s)
		at       time.Duration  // after t0
		popped   []string
		wantNext time.Duration // after t0; -1 for none
	}{
		{name: "unchanged", change: func(*Queue) {}, at: time.Second, popped: []string{"ns/a", "ns/b"}, wantNext: -1},
		{name: "dropped", change: func(q *Queue) { q.Drop("ns/a") }, at: time.Second, popped: []string{"ns/b"}, wantNext: -1},
		{name: "queued again and decided", change: func(q *Queue) { q.Add("ns/a"); q.Pop() }, at: time.Second, popped: []string{"ns/b"}, wantNext: -1},
		{name: "backed off again", change: func(q *Queue) { q.Unschedulable("ns/a", t0) }, at: time.Second, popped: []string{"ns/b"}, wantNext: 2 * time.Second},
		{name: "backed off again, later end due", change: func(q *Queue) { q.Unschedulable("ns/a", t0) }, at: 2 * time.Second, popped: []string{"ns/b", "ns/a"}, wantNext: -1},
		{name: "all retried", change: func(q *Queue) { q.RetryAll(); popAll(q) }, at: time.Minute, wantNext: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue()
			q.Unschedulable("ns/b", t0)
			q.Unschedulable("ns/a", t0)
			tc.change(q)
			checkRetryDue(t, q, tc.at, tc.popped, tc.wantNext)
		})
	}
}

// checkRetryDue runs RetryDue at t0+at and checks the pods it queued, in order, and
// when it says the next backoff ends (after t0; -1 for none).
func checkRetryDue(t *testing.T, q *Queue, at time.Duration, popped []string, wantNext time.Duration) {
	t.Helper()
	next := q.RetryDue(t0.Add(at))
	if got := popAll(q); !slices.Equal(got, popped) {
		t.Errorf("queued %q, want %q", got, popped)
	}
	switch {
	case wantNext < 0 && !next.IsZero():
		t.Errorf("next %v, want none", next)
	case wantNext >= 0 && !next.Equal(t0.Add(wantNext)):
		t.Errorf("next %v, want t0+%v", next, wantNext)
	}
}

// The heap of backoff ends keeps no stale entry once no pod backs off.
func TestQueueForgetsEndedBackoffs(t *testing.T) {
	q := NewQueue()
	for i := range 100 {
		key := fmt.Sprintf("ns/p%d", i)
		q.Unschedulable(key, t0)
		if i%2 == 0 {
			q.Drop(key)
		} else {
			q.Add(key)
		}
	}
	if len(q.due) != 0 {
		t.Fatalf("%d entries kept with no pod backing off", len(q.due))
	}
	popAll(q) // the pods queued again are decided
	checkRetryDue(t, q, time.Minute, nil, -1)
}
