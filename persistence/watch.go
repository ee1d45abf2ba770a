package persistence

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"
)

// logView is the in-memory change log as of one publish: every event with revision >
// compactRev, in order; event number firstSeq+i is events[i]. Watchers read views
// without a lock, so that a thousand of them waking at every commit never hold up the
// committer: a published view is never changed. The committer makes the next view by
// appending past the end of the current one (an index no published view can read) and,
// when the log is compacted, by copying the events it keeps into a new array.
type logView struct {
	events     []Event
	firstSeq   int64
	compactRev int64
	notify     chan struct{} // closed when the next view is published
	shut       bool          // the store is closed: no view follows
}

func (v *logView) nextSeq() int64 { return v.firstSeq + int64(len(v.events)) }

// after is the sequence number of the first event with revision > rev.
func (v *logView) after(rev int64) int64 {
	i := sort.Search(len(v.events), func(i int) bool { return v.events[i].Item.Revision > rev })
	return v.firstSeq + int64(i)
}

// advanceLog publishes the view with events appended and the entries up to compact
// dropped, and wakes the watchers waiting on the current one. Only the committer
// calls it (and Close, after the committer stopped), under s.mu.
func (s *Store) advanceLog(events []Event, compact int64, shut bool) {
	cur := s.changes.Load()
	next := &logView{events: append(cur.events, events...), firstSeq: cur.firstSeq,
		compactRev: cur.compactRev, notify: make(chan struct{}), shut: shut}
	shedTo := s.rev.Load() - s.shedAge
	if compact > next.compactRev || shedTo-s.shedRev >= s.compactStep {
		// A published view's array is never changed, so compacting or shedding
		// works on a copy: once every compactStep revisions, like compaction.
		n := int(next.after(compact) - next.firstSeq)
		// The dropped items can go once no reader holds cur. The copy has room for the
		// appends until the next one: a copy of its exact length would be copied
		// again, twice as large, by the very next append.
		kept := next.events[n:]
		next.events = append(make([]Event, 0, len(kept)+int(s.compactStep)+len(events)), kept...)
		next.firstSeq += int64(n)
		next.compactRev = max(compact, next.compactRev)
		s.shedEncodings(next, shedTo)
		s.shedRev = max(s.shedRev, shedTo)
	}
	s.changes.Store(next)
	close(cur.notify)
}

// shedFraction: a superseded version is shed window/shedFraction revisions after it
// was written. Half a window kept 140 MB of decoded heartbeats (node versions) live
// at 5,000 nodes.
const shedFraction = 8

// shedEncodings replaces, in v's own copy of the events, each version up to to that
// a later change superseded by a lean copy: its stored JSON alone, without the
// decoded object. A reader of the log that far behind gets the object decoded again
// from that JSON (revive: what a restarted server would have decoded), once per
// read. Called, every compactStep revisions, with the shed line (the revision
// shedAge before the last: an eighth of the window, 12,500 revisions by default, 25 s
// of 5,000 nodes' heartbeats, a few seconds of a busy build), so a version is shed at
// the first call after it is both that old and superseded: the watchers and feeds
// that keep up have read it long before, and the log then holds each old version of
// an object as its JSON only (a byte slice the collector need not scan). It looks
// only at the versions publish superseded since (s.superseded), each found in the
// log by its revision: scanning the whole log's older part for them, at every call,
// was 3% of the server's CPU under 5,000 nodes' heartbeats.
func (s *Store) shedEncodings(v *logView, to int64) {
	keep := s.superseded[:0]
	for _, it := range s.superseded {
		switch {
		case it.Revision > to:
			keep = append(keep, it) // not old enough yet
		case it.transient || it.Revision <= v.compactRev || it.JSON() == nil:
			// lean already, out of the log, or no encoding to decode from
		default:
			for i := int(v.after(it.Revision-1) - v.firstSeq); i < len(v.events) && v.events[i].Item.Revision == it.Revision; i++ {
				if v.events[i].Item == it {
					v.events[i].Item = s.oldVersion(it.Key, it.Revision, it.uid, it.JSON())
					break
				}
			}
		}
	}
	clear(s.superseded[len(keep):]) // the shed versions can go
	s.superseded = keep
}

// oldVersion is a superseded version as the change log keeps it: its JSON alone,
// decoded by each reader (revive) and never kept decoded.
func (s *Store) oldVersion(key Key, rev int64, uid types.UID, js []byte) *Item {
	return &Item{Key: key, Revision: rev, newObject: s.newObject, transient: true, uid: uid, json: js}
}

// revive returns it itself or, for an old version shed from the change log
// (shedEncodings, load), a new item decoded from its JSON, which its reader may call
// Object on as often as it likes while the log keeps the version lean.
func (s *Store) revive(it *Item) (*Item, error) {
	if !it.transient || !it.lean() {
		return it, nil
	}
	d := &Item{Key: it.Key, Revision: it.Revision, newObject: it.newObject, json: it.json}
	if err := d.decode(); err != nil {
		return nil, err
	}
	return d, nil
}

// Watcher delivers the events of one resource after a revision.
type Watcher struct {
	s         *Store
	ctx       context.Context
	resource  string
	namespace string
	from      int64
	cursor    int64 // sequence number of the next event to look at
}

// Watch returns a watcher for events of resource (in namespace, or all when empty)
// with revision greater than from. It fails with ErrCompacted when from is older
// than the change log keeps, i.e. when an event after from is already gone. To
// watch from now, pass Revision() or a snapshot's revision.
func (s *Store) Watch(ctx context.Context, resource, namespace string, from int64) (*Watcher, error) {
	v := s.changes.Load()
	if from < v.compactRev {
		return nil, fmt.Errorf("watch %s from %d (oldest kept %d): %w", resource, from, v.compactRev+1, ErrCompacted)
	}
	return &Watcher{s: s, ctx: ctx, resource: resource, namespace: namespace, from: from, cursor: v.after(from)}, nil
}

// watchBatch is the most events one Next returns: a watcher that lags holds at most
// this many events (and the items they point to) of its own, however far behind it is.
const watchBatch = 1024

// Next blocks until at least one event is available and returns those that are, up
// to watchBatch, in revision order. It returns ctx.Err() when ctx (or the Watch context) ends,
// ErrCompacted when the watcher fell behind the change log window, and ErrClosed
// once the store is closed. A Watcher is used by one goroutine at a time.
func (w *Watcher) Next(ctx context.Context) ([]Event, error) {
	for {
		v := w.s.changes.Load()
		if w.cursor < v.firstSeq {
			return nil, fmt.Errorf("watch %s: %w", w.resource, ErrCompacted)
		}
		var out []Event
		next := v.nextSeq()
		for i, ev := range v.events[w.cursor-v.firstSeq:] {
			if ev.Item.Key.Resource == w.resource && ev.Item.Revision > w.from &&
				(w.namespace == "" || ev.Item.Key.Namespace == w.namespace) {
				out = append(out, ev)
				if len(out) == watchBatch {
					next = w.cursor + int64(i) + 1
					break
				}
			}
		}
		w.cursor = next
		for i := range out {
			it, err := w.s.revive(out[i].Item)
			if err != nil {
				return nil, fmt.Errorf("watch %s: %w", w.resource, err)
			}
			out[i].Item = it
		}
		if len(out) > 0 {
			return out, nil
		}
		if v.shut {
			return nil, fmt.Errorf("watch %s: %w", w.resource, ErrClosed)
		}
		select {
		case <-v.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.ctx.Done():
			return nil, w.ctx.Err()
		}
	}
}

// Expired reports whether events this watcher has not yet read were dropped from the
// change log: the next Next fails with ErrCompacted. Like Next, it is for the
// watcher's one goroutine.
func (w *Watcher) Expired() bool {
	return w.cursor < w.s.changes.Load().firstSeq
}
