package podsync

import (
	"time"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// Crash back-off parameters (the kubelet's): the first restart after an exit is
// immediate, later ones wait 10s, 20s, 40s ... up to 5m.
const (
	BackoffInitial = 10 * time.Second
	BackoffMax     = 5 * time.Minute
	// BackoffResetRun is how long a container must have run for its next exit to
	// start the back-off again from the beginning.
	BackoffResetRun = 10 * time.Minute
)

// BackoffEntry is the crash back-off of one container spec.
type BackoffEntry struct {
	// Delay is the wait between the container's next exit and its restart.
	Delay time.Duration `json:"delay"`
	// Until is the end of the wait Delay was last set for (the exit it was set at
	// plus Delay). Once the exit is more than 2×BackoffMax old the entry is stale.
	Until time.Time `json:"until"`
}

// Backoff is the crash back-off state of one pod's containers, keyed by BackoffKey
// ("<container>_<hash>", so a changed spec starts afresh). The agent keeps one per
// pod and hands back the map ComputePlan returns; the input is never modified.
type Backoff map[string]BackoffEntry

// BackoffKey is the Backoff key of a container spec with the given name and hash.
func BackoffKey(name, hash string) string { return name + "_" + hash }

// since is the exit the entry's delay was set at.
func (e BackoffEntry) since() time.Time { return e.Until.Add(-e.Delay) }

// stale tells whether the entry's last exit is more than 2×BackoffMax before t.
func (e BackoffEntry) stale(t time.Time) bool { return t.Sub(e.since()) > 2*BackoffMax }

// ranLong tells whether a container that ran from started to finished ran long
// enough to reset its back-off.
func ranLong(started, finished time.Time) bool {
	return !started.IsZero() && finished.Sub(started) >= BackoffResetRun
}

// Hold tells whether restarting the container that exited at finished (after
// running from started) must wait at now, and until when.
func (b Backoff) Hold(key string, started, finished, now time.Time) (delay time.Duration, until time.Time, held bool) {
	e, ok := b[key]
	if !ok || e.stale(now) || ranLong(started, finished) {
		return 0, time.Time{}, false
	}
	until = finished.Add(e.Delay)
	if now.Before(until) {
		return e.Delay, until, true
	}
	return 0, time.Time{}, false
}

// Next records a restart of the container that exited at finished: the delay for
// its next exit doubles (capped at BackoffMax), or starts at BackoffInitial after
// no entry, a stale one or a long run. b is modified.
func (b Backoff) Next(key string, started, finished time.Time) {
	d := BackoffInitial
	if e, ok := b[key]; ok && !e.stale(finished) && !ranLong(started, finished) {
		d = min(2*e.Delay, BackoffMax)
	}
	b[key] = BackoffEntry{Delay: d, Until: finished.Add(d)}
}

// clone copies the entries of b whose key is in keep.
func (b Backoff) clone(keep map[string]bool) Backoff {
	out := Backoff{}
	for k, e := range b {
		if keep[k] {
			out[k] = e
		}
	}
	return out
}

// exitTimes are the start and finish of a dead container; a container that never
// ran finished when it was created (or now, if even that is unknown).
func exitTimes(c runtime.Container, now time.Time) (started, finished time.Time) {
	finished = c.FinishedAt
	if finished.IsZero() {
		finished = c.CreatedAt
	}
	if finished.IsZero() {
		finished = now
	}
	return c.StartedAt, finished
}
