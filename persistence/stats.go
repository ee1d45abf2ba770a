package persistence

import (
	"sort"
	"sync/atomic"
	"time"
)

// Histogram counts observations into fixed buckets with atomics only: observing takes
// no lock and allocates nothing, so it can sit on the committer's and the actors' hot
// paths. A reader (a metrics collector) takes a Snapshot at any time; the snapshot
// may be a few observations behind, never torn within one bucket. Values are int64
// in the unit of its bounds (nanoseconds for durations, a count for sizes).
type Histogram struct {
	upper   []int64         // inclusive upper bounds, ascending
	buckets []atomic.Uint64 // per bound, then one for +Inf
	sum     atomic.Int64
}

// NewHistogram makes a histogram with the given inclusive upper bounds (ascending).
func NewHistogram(upper ...int64) *Histogram {
	u := append([]int64(nil), upper...)
	sort.Slice(u, func(i, j int) bool { return u[i] < u[j] })
	return &Histogram{upper: u, buckets: make([]atomic.Uint64, len(u)+1)}
}

// NewDurationHistogram makes a histogram of durations with bounds in seconds (as
// Prometheus writes them), observed in nanoseconds.
func NewDurationHistogram(seconds ...float64) *Histogram {
	u := make([]int64, len(seconds))
	for i, s := range seconds {
		u[i] = int64(s * float64(time.Second))
	}
	return NewHistogram(u...)
}

// Observe counts one value.
func (h *Histogram) Observe(v int64) {
	i := 0
	for i < len(h.upper) && v > h.upper[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sum.Add(v)
}

// ObserveSince counts the time since start.
func (h *Histogram) ObserveSince(start time.Time) { h.Observe(int64(time.Since(start))) }

// HistogramSnapshot is a histogram's counts at one moment: Cumulative[i] counts the
// observations <= Upper[i]; Count includes those above every bound.
type HistogramSnapshot struct {
	Upper      []int64
	Cumulative []uint64
	Count      uint64
	Sum        int64
}

// Snapshot reads the histogram.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Upper: h.upper, Cumulative: make([]uint64, len(h.upper))}
	var total uint64
	for i := range h.buckets {
		total += h.buckets[i].Load()
		if i < len(h.upper) {
			s.Cumulative[i] = total
		}
	}
	s.Count, s.Sum = total, h.sum.Load()
	return s
}

// Latency buckets of the store, in seconds: from 100µs (a group commit on a fast
// disk) to 10s.
var storeLatencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// groupSizeBuckets are the bounds of the commit group size (transactions per fsync).
var groupSizeBuckets = []int64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}

// storeStats is what the store measures of itself (see Stats).
type storeStats struct {
	apply     *Histogram // Apply: queue wait, decision, batch, fsync and publish
	fsync     *Histogram // one group's synced batch commit
	groupSize *Histogram // transactions per group
}

func newStoreStats() storeStats {
	return storeStats{
		apply:     NewDurationHistogram(storeLatencyBuckets...),
		fsync:     NewDurationHistogram(storeLatencyBuckets...),
		groupSize: NewHistogram(groupSizeBuckets...),
	}
}

// Stats is what the store has measured since it opened, and what it holds now.
type Stats struct {
	// Objects counts the stored objects per resource.
	Objects map[string]int
	// Lean counts the current objects kept as their JSON alone after the last sweep
	// (Options.LeanAfter): decoded again when next read.
	Lean int
	// Apply is the latency of Apply (queueing, deciding, writing, the shared fsync and
	// publishing), in nanoseconds; Fsync the synced commit of one group, in
	// nanoseconds; GroupSize the transactions committed together.
	Apply, Fsync, GroupSize HistogramSnapshot
}

// Stats reads the store's counters and the number of objects of each resource
// (from the in-memory index, under the read lock: for a scrape, not a hot path).
func (s *Store) Stats() Stats {
	st := Stats{
		Apply: s.stats.apply.Snapshot(), Fsync: s.stats.fsync.Snapshot(), GroupSize: s.stats.groupSize.Snapshot(),
		Lean: int(s.leanCount.Load()),
	}
	s.mu.RLock()
	st.Objects = make(map[string]int, len(s.trees))
	for r, t := range s.trees {
		st.Objects[r] = t.Len()
	}
	s.mu.RUnlock()
	return st
}
