package persistence

import (
	"time"

	"github.com/google/btree"
)

// DefaultLeanAfter is Options.LeanAfter's default.
const DefaultLeanAfter = 30 * time.Second

// sweepDecoded makes lean (its JSON alone, decoded again when next read) each item
// whose object no one read since the previous sweep, and marks the others for the
// next: a clock, so an item read at least once a period stays decoded and one left
// alone goes lean one to two periods after its last read. It looks at the current
// items and at those the retained snapshots hold (lists': older versions, pinned
// until the snapshot expires), each once. At the
// envelope's 150,000 pods nothing reads a settled pod (its actor stopped, its RC
// settled, lists served from JSON): the decoded pods were about 800 MB of a 2.2 GB
// live heap, and most of what the collector had to trace at every cycle. It returns
// how many it made lean.
func (s *Store) sweepDecoded() int {
	if s.newObject == nil {
		return 0 // nothing could decode a lean item again
	}
	gen := uint32(s.sweeps.Add(1))
	n, lean := 0, 0
	visit := func(it *Item) bool {
		if it.visited.Swap(gen) == gen {
			return true // current and in a snapshot: looked at once
		}
		switch {
		case it.recent.Load():
			it.recent.Store(false)
		case it.lean():
			lean++
		case it.json != nil:
			it.obj.Store(nil)
			n++
			lean++
		}
		return true
	}
	s.mu.Lock()
	s.snaps.expire(now()) // (otherwise expired only when a snapshot is taken)
	s.dropStaleClones()
	trees := make([]*btree.BTreeG[*Item], 0, len(s.snaps))
	for _, e := range s.snaps {
		trees = append(trees, e.tree)
	}
	s.mu.Unlock()
	s.mu.RLock()
	for _, it := range s.latest {
		visit(it)
	}
	current := lean
	s.mu.RUnlock()
	for _, t := range trees { // clones nobody writes: read without the lock
		t.Ascend(visit)
	}
	s.leanCount.Store(int64(current))
	return n
}

// dropStaleClones forgets each resource's last scan clone (Snapshot's, kept for
// reuse) once the resource changed since: it can never be reused, and its tree pins
// every version superseded since it was taken, decoded. At the envelope's size the
// last scan of pods during the build (an RC's) pinned the bound versions of most
// pods, 150 to 300 MB of decoded pods that nothing read, until the next scan of
// pods, which a settled cluster never takes. Under s.mu.
func (s *Store) dropStaleClones() {
	for r, e := range s.clones {
		if e.minRev != s.modRev[r] {
			delete(s.clones, r)
		}
	}
}

// sweeper runs sweepDecoded every period until the store closes.
func (s *Store) sweeper(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-t.C:
			if n := s.sweepDecoded(); n > 0 {
				s.log.WithField("items", n).Debug("current objects left lean")
			}
		}
	}
}
