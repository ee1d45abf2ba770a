package scheduler

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The scheduler's budget for event writes. Every event is a durable write on the
// same cores as the API's object writes, so a flood of unschedulable pods (thousands
// created with no node to take them) must not turn into a flood of FailedScheduling
// writes. Three things bound them:
//
//   - a pod is decided again only when its backoff ends (Queue: 1 s doubling to
//     60 s) or the cluster changed, and each failed decision offers one event: at
//     most one write per pod per backoff step;
//   - repeated identical events of a pod name one Event object (event.Record.Key),
//     whose count and lastTimestamp are bumped rather than a new Event created, as
//     Kubernetes' event correlator does;
//   - the scheduler's event writes draw on a token bucket of EventRate per second
//     and EventBurst at once (kube-scheduler's client allows 50 queries per second,
//     burst 100, its events included). An occurrence that finds no token is held,
//     one per pod (later ones of the pod add to its count), and written, oldest
//     first, as tokens come back; a pod bound or deleted meanwhile takes its held
//     event with it;
//   - a Droppable occurrence (a Scheduled event: its pod has left the scheduler's
//     queue, so nothing else bounds how many are held) is dropped and counted when
//     MaxHeldEvents droppable ones are held already, as client-go's event
//     broadcaster drops what does not fit its queue of 1,000 events: a burst of
//     150,000 bindings must not keep 150,000 Scheduled events (and the pods they
//     point to) in memory, written at 50 a second for the next 50 minutes. A
//     FailedScheduling occurrence is never dropped: one is held per pending pod at
//     most, and the scheduler's queue holds that pod anyway.
const (
	EventRate     = 50.0
	EventBurst    = 100
	MaxHeldEvents = 1000
)

// HeldEvent is an event occurrence (or several of one pod, counted) waiting for a
// token.
type HeldEvent struct {
	Key     string // the pod's PodKey
	Pod     *corev1.Pod
	Type    string
	Reason  string
	Message string
	Count   int32     // occurrences it stands for
	At      time.Time // of the latest
	// Droppable says the occurrence may be dropped rather than held when
	// MaxHeldEvents droppable ones are held.
	Droppable bool
}

// EventBudget decides which event occurrences are written now. It takes the time as
// a value; it is for one goroutine (the scheduler actor).
type EventBudget struct {
	rate      float64
	burst     float64
	tokens    float64
	last      time.Time
	held      map[string]*HeldEvent
	order     []string // held pods, oldest first; may name pods dropped since
	maxHeld   int      // droppable occurrences held at most
	droppable int      // droppable occurrences held now
	dropped   int64    // droppable occurrences dropped
}

// NewEventBudget returns a full bucket of burst tokens refilled at rate per second,
// holding at most maxHeld droppable occurrences at once.
func NewEventBudget(rate float64, burst, maxHeld int) *EventBudget {
	return &EventBudget{rate: rate, burst: float64(burst), tokens: float64(burst), held: make(map[string]*HeldEvent), maxHeld: maxHeld}
}

func (b *EventBudget) refill(now time.Time) {
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
}

// Offer notes one occurrence e (Count is taken as 1) at now. It returns e to be
// written now, or false when it is held (then NextFlush tells when to call Flush)
// or dropped (e is Droppable and maxHeld droppable ones are held: Dropped counts it).
// Occurrences already held go first, so a pod's later occurrence never overtakes
// another pod's first.
func (b *EventBudget) Offer(e HeldEvent, now time.Time) (HeldEvent, bool) {
	b.refill(now)
	e.Count, e.At = 1, now
	if h, ok := b.held[e.Key]; ok {
		if h.Message == e.Message && h.Reason == e.Reason && h.Type == e.Type {
			h.Count++
		} else { // the latest reason the pod waits supersedes the earlier one
			h.Type, h.Reason, h.Message, h.Count = e.Type, e.Reason, e.Message, 1
		}
		h.Pod, h.At = e.Pod, now
		return HeldEvent{}, false
	}
	if len(b.held) == 0 && b.tokens >= 1 {
		b.tokens--
		return e, true
	}
	if e.Droppable {
		if b.droppable >= b.maxHeld {
			b.dropped++
			return HeldEvent{}, false
		}
		b.droppable++
	}
	b.held[e.Key] = &e
	b.order = append(b.order, e.Key)
	return HeldEvent{}, false
}

// Flush returns the held occurrences the tokens allow at now, oldest first, and when
// the next token for the rest comes (the zero time when nothing is held).
func (b *EventBudget) Flush(now time.Time) (out []HeldEvent, next time.Time) {
	b.refill(now)
	for len(b.order) > 0 && b.tokens >= 1 {
		key := b.order[0]
		b.order[0] = ""
		b.order = b.order[1:]
		h, ok := b.held[key]
		if !ok {
			continue
		}
		b.forget(key, h)
		b.tokens--
		out = append(out, *h)
	}
	return out, b.NextFlush(now)
}

// NextFlush is when a held occurrence may next be written: the zero time when none
// is held.
func (b *EventBudget) NextFlush(now time.Time) time.Time {
	if len(b.held) == 0 {
		b.order = b.order[:0]
		return time.Time{}
	}
	if b.tokens >= 1 {
		return now
	}
	wait := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
	return now.Add(max(wait, time.Millisecond))
}

// Drop forgets the occurrences held for a pod: it was bound or deleted.
func (b *EventBudget) Drop(key string) {
	if h, ok := b.held[key]; ok {
		b.forget(key, h)
	}
}

func (b *EventBudget) forget(key string, h *HeldEvent) {
	delete(b.held, key)
	if h.Droppable {
		b.droppable--
	}
}

// Held is the number of pods with occurrences held.
func (b *EventBudget) Held() int { return len(b.held) }

// Dropped is the number of droppable occurrences dropped because maxHeld were held.
func (b *EventBudget) Dropped() int64 { return b.dropped }
