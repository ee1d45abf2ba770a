package persistence

import (
	"context"
	"fmt"
	"sort"
)

// ring is the in-memory change log: every event with revision > compactRev, in
// order. Event number firstSeq+i is events[i]; watchers keep their own cursor.
type ring struct {
	events   []Event
	firstSeq int64
}

func (r *ring) append(evs []Event) { r.events = append(r.events, evs...) }

func (r *ring) nextSeq() int64 { return r.firstSeq + int64(len(r.events)) }

// after is the sequence number of the first event with revision > rev.
func (r *ring) after(rev int64) int64 {
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].Item.Revision > rev })
	return r.firstSeq + int64(i)
}

// trim drops the events with revision <= rev.
func (r *ring) trim(rev int64) {
	n := int(r.after(rev) - r.firstSeq)
	clear(r.events[:n]) // let the items go
	r.events = r.events[n:]
	r.firstSeq += int64(n)
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
	s.mu.RLock()
	defer s.mu.RUnlock()
	if from < s.compactRev {
		return nil, fmt.Errorf("watch %s from %d (oldest kept %d): %w", resource, from, s.compactRev+1, ErrCompacted)
	}
	return &Watcher{s: s, ctx: ctx, resource: resource, namespace: namespace, from: from, cursor: s.ring.after(from)}, nil
}

// Next blocks until at least one event is available and returns all that are, in
// revision order. It returns ctx.Err() when ctx (or the Watch context) ends,
// ErrCompacted when the watcher fell behind the change log window, and ErrClosed
// once the store is closed. A Watcher is used by one goroutine at a time.
func (w *Watcher) Next(ctx context.Context) ([]Event, error) {
	s := w.s
	for {
		s.mu.RLock()
		if w.cursor < s.ring.firstSeq {
			s.mu.RUnlock()
			return nil, fmt.Errorf("watch %s: %w", w.resource, ErrCompacted)
		}
		var out []Event
		for _, ev := range s.ring.events[w.cursor-s.ring.firstSeq:] {
			if ev.Item.Key.Resource == w.resource && ev.Item.Revision > w.from &&
				(w.namespace == "" || ev.Item.Key.Namespace == w.namespace) {
				out = append(out, ev)
			}
		}
		w.cursor = s.ring.nextSeq()
		notify, shut := s.notify, s.shut
		s.mu.RUnlock()
		if len(out) > 0 {
			return out, nil
		}
		if shut {
			return nil, fmt.Errorf("watch %s: %w", w.resource, ErrClosed)
		}
		select {
		case <-notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.ctx.Done():
			return nil, w.ctx.Err()
		}
	}
}
