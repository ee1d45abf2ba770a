package actors

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/kubeactor/kubeactor/persistence"
)

// What the actors measure of themselves, for the server's metrics (gateway/metrics.go
// reads System.Stats at scrape time). Everything on a message's path is an atomic add
// on counters made at Start: no lock, no allocation per message.

// handlingBuckets are the bounds of an actor's handling time, in seconds.
var handlingBuckets = []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

// schedulingBuckets are the scheduler's attempt duration bounds, in seconds (the
// scheduler's own: 1ms doubling to about 16s, as Kubernetes' ExponentialBuckets(0.001, 2, 15)).
var schedulingBuckets = func() []float64 {
	b := make([]float64, 15)
	for i, v := 0, 0.001; i < len(b); i, v = i+1, v*2 {
		b[i] = v
	}
	return b
}()

// kindStats counts what the actors of one kind do. It is also their mailboxes'
// middleware (actor.MailboxMiddleware): posted minus received is the depth of every
// mailbox of the kind together.
type kindStats struct {
	kind             string
	posted, received atomic.Int64
	restarts         atomic.Int64
	live             atomic.Int64 // object actors alive now (a kind's manager counts them)
	handling         *persistence.Histogram
	withMailbox      actor.PropsOption // made once: a spawn allocates nothing more for it
}

var _ actor.MailboxMiddleware = (*kindStats)(nil)

func newKindStats(kind string) *kindStats {
	k := &kindStats{kind: kind, handling: persistence.NewDurationHistogram(handlingBuckets...)}
	k.withMailbox = actor.WithMailbox(actor.Unbounded(k))
	return k
}

func (k *kindStats) MailboxStarted()            {}
func (k *kindStats) MessagePosted(any)          { k.posted.Add(1) }
func (k *kindStats) MessageReceived(any)        { k.received.Add(1) }
func (k *kindStats) MailboxEmpty()              {}
func (k *kindStats) handled(at time.Time)       { k.handling.ObserveSince(at) }
func (k *kindStats) mailbox() actor.PropsOption { return k.withMailbox }

// restarted counts a restart. The message whose handling panicked is never reported
// received by the mailbox: it counts as received here, so the depth stays true.
func (k *kindStats) restarted() {
	k.restarts.Add(1)
	k.received.Add(1)
}

// schedStats counts the scheduler's attempts.
type schedStats struct {
	scheduled, unschedulable, errors atomic.Int64
	pending, eventsDropped           atomic.Int64
	attempt                          *persistence.Histogram
}

// stats is every counter of the system, made at Start and never changed after, so
// reading the maps needs no lock.
type stats struct {
	objects  map[string]*kindStats // object actors, by resource
	managers map[string]*kindStats // managers, by resource
	// scheduler is the scheduler actor's and shards are its shards'.
	scheduler, shards *kindStats
	sched             schedStats
}

func newStats(resources []string) *stats {
	s := &stats{
		objects:   make(map[string]*kindStats, len(resources)),
		managers:  make(map[string]*kindStats, len(resources)),
		scheduler: newKindStats("scheduler"),
		shards:    newKindStats("scheduler-shard"),
		sched:     schedStats{attempt: persistence.NewDurationHistogram(schedulingBuckets...)},
	}
	for _, r := range resources {
		s.objects[r] = newKindStats(r)
		s.managers[r] = newKindStats(r + "-manager")
	}
	return s
}

// ActorStats is what the actors of one kind did since Start. Kind is the resource
// of object actors ("pods"), "<resource>-manager" for a kind's manager, "scheduler"
// and "scheduler-shard".
type ActorStats struct {
	Kind string
	// Messages counts the messages handled (system messages included); MailboxDepth
	// the messages waiting in the kind's mailboxes now; Restarts the restarts by a
	// supervisor after a panic; Live the actors alive now, for object actors
	// (Objects) only.
	Messages, MailboxDepth, Restarts, Live int64
	Objects                                bool
	// Handling is the time spent handling a message, in nanoseconds (user messages).
	Handling persistence.HistogramSnapshot
}

// SchedulerStats is what the scheduler did since Start.
type SchedulerStats struct {
	// Attempts by result: bound, fitting nowhere, or failed (not assumed, or the
	// binding refused).
	Scheduled, Unschedulable, Errors int64
	// Pending counts the pods waiting for a decision (queued or backing off).
	Pending int64
	// EventsDropped counts event occurrences dropped because the event budget held
	// scheduler.MaxHeldEvents pods' already.
	EventsDropped int64
	// Attempt is a round's duration (the shards' bids and the merge), in nanoseconds.
	Attempt persistence.HistogramSnapshot
}

// Stats is the system's counters at one moment.
type Stats struct {
	Actors    []ActorStats    // by Kind
	Scheduler *SchedulerStats // nil when the system runs no scheduler
}

// Stats reads the actors' counters. It takes no lock an actor takes.
func (s *System) Stats() Stats {
	st := s.env.stats
	var out Stats
	add := func(k *kindStats, objects bool) {
		received := k.received.Load()
		out.Actors = append(out.Actors, ActorStats{
			Kind: k.kind, Messages: received, MailboxDepth: max(k.posted.Load()-received, 0),
			Restarts: k.restarts.Load(), Live: k.live.Load(), Objects: objects, Handling: k.handling.Snapshot(),
		})
	}
	for _, r := range s.env.resources {
		add(st.objects[r], true)
		add(st.managers[r], false)
	}
	if s.env.sched != nil {
		add(st.scheduler, false)
		add(st.shards, false)
	}
	slices.SortFunc(out.Actors, func(a, b ActorStats) int {
		switch {
		case a.Kind < b.Kind:
			return -1
		case a.Kind > b.Kind:
			return 1
		}
		return 0
	})
	if s.env.sched != nil {
		out.Scheduler = &SchedulerStats{
			Scheduled: st.sched.scheduled.Load(), Unschedulable: st.sched.unschedulable.Load(), Errors: st.sched.errors.Load(),
			Pending: st.sched.pending.Load(), EventsDropped: st.sched.eventsDropped.Load(), Attempt: st.sched.attempt.Snapshot(),
		}
	}
	return out
}
