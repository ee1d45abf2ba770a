package persistence

import (
	"context"
	"time"
)

// ApplyTiming is where one Apply's time went, for a caller that traces it (issue 15).
// The caller asks for it with WithTiming; Apply fills it before it returns. An Apply
// without it measures nothing more than the store's histograms (Stats).
//
// A field stays zero for a step the Apply did not take: Fsync on a replicated store
// (its Raft log is synced within Replicate), Replicate on a store of one, Queued,
// Group, Fsync and Replicate on a follower (the leader took them, within Forward),
// everything but Start after an error before the transaction was queued or sent.
type ApplyTiming struct {
	// Start is when the transaction, checked and encoded, was handed to the
	// committer (or, on a follower, to the forwarder).
	Start time.Time
	// Queued is the wait for the committer: from Start until its group was taken
	// (on a replicated store, until the group was proposed as one Raft entry).
	Queued time.Duration
	// Group counts the transactions of its commit group (its Raft entry).
	Group int
	// Fsync is the group's synced batch commit (a store of one).
	Fsync time.Duration
	// Replicate is the entry's way from its proposal until this replica's FSM has it
	// committed: the leader's log write and the followers' acknowledgements of a
	// majority (a replicated store).
	Replicate time.Duration
	// Apply is the writing of the group into the state and its publication to readers
	// and watchers, without the fsync (the committer's or the FSM's); on a follower,
	// the wait after the leader's answer until this replica applied the revision.
	Apply time.Duration
	// Forwarded is set when a follower sent the transaction to the leader (forward.go),
	// and Forward is from Start until the leader's answer: the forwarder's batching,
	// the round trip and the leader's whole apply, replication included.
	Forwarded bool
	Forward   time.Duration
	// Revision is the transaction's revision (0 when it failed).
	Revision int64

	proposed time.Time // replicated: when the committer proposed its entry
}

type timingKey struct{}

// WithTiming returns a context asking Apply to fill t. Only Apply's caller uses t,
// after Apply has returned.
func WithTiming(ctx context.Context, t *ApplyTiming) context.Context {
	return context.WithValue(ctx, timingKey{}, t)
}

// timingOf is the ApplyTiming ctx asks for, or nil.
func timingOf(ctx context.Context) *ApplyTiming {
	t, _ := ctx.Value(timingKey{}).(*ApplyTiming)
	return t
}

// timedGroup reports whether a transaction of the group asks for its timing.
func timedGroup(group []*request) bool {
	for _, r := range group {
		if r.timing != nil {
			return true
		}
	}
	return false
}
