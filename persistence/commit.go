package persistence

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// maxGroup bounds how many transactions share one batch and one fsync.
const maxGroup = 4096

// request is one queued transaction.
type request struct {
	cmds []Command
	enc  []encoded // pre-encoded objects of creates and updates
	uids []types.UID
	done chan result
}

type result struct {
	rev  int64
	objs []runtime.Object
	err  error
}

// run is the committer: it takes every transaction queued so far as one group,
// commits it with one synced batch, publishes it, and replies.
func (s *Store) run() {
	defer close(s.stopped)
	group := make([]*request, 0, 256)
	for {
		r, ok := <-s.queue
		if !ok {
			return
		}
		group = append(group[:0], r)
		open := true
	drain:
		for len(group) < maxGroup {
			select {
			case r, ok := <-s.queue:
				if !ok {
					open = false
					break drain
				}
				group = append(group, r)
			default:
				break drain
			}
		}
		s.commit(group)
		clear(group)
		if !open {
			return
		}
	}
}

// commit decides every transaction of the group in order against the current state
// plus the group's earlier transactions, writes the accepted ones in one batch with
// one fsync, publishes them and replies.
func (s *Store) commit(group []*request) {
	results := make([]result, len(group))
	start := s.rev.Load()
	rev := start
	var events []Event
	clear(s.overlay)
	batch := s.db.NewBatch()
	defer batch.Close()

	for gi, r := range group {
		if s.failed != nil {
			results[gi].err = fmt.Errorf("apply: %w", s.failed)
			continue
		}
		ops, err := s.materialize(rev+1, r)
		if err != nil {
			results[gi].err = err
			continue
		}
		rev++
		objs := make([]runtime.Object, len(ops))
		for i, op := range ops {
			if op.value == nil {
				_ = batch.Delete(objKey(op.ev.Item.Key), nil)
				s.overlay[op.ev.Item.Key] = nil
			} else {
				k := op.ev.Item.Key
				d := batch.SetDeferred(objKeyLen(k), len(op.value))
				appendObjKey(d.Key[:0], k)
				copy(d.Value, op.value)
				_ = d.Finish()
				s.overlay[op.ev.Item.Key] = op.ev.Item
				objs[i] = op.ev.Item.Object
			}
			// The change-log entry is written straight into the batch: no key or value
			// of its own to allocate and copy on the committer's goroutine.
			d := batch.SetDeferred(logKeyLen, logValueLen(op.ev.Item.Key, op.ev.Item.json))
			appendLogKey(d.Key[:0], rev, i)
			appendLogValue(d.Value[:0], op.ev.Type, op.ev.Item.Key, op.ev.Item.json)
			_ = d.Finish()
			events = append(events, op.ev)
		}
		results[gi] = result{rev: rev, objs: objs}
	}

	compact := s.changes.Load().compactRev // only the committer publishes views
	if rev > start {
		_ = batch.Set(revKey, encodeRev(rev), nil)
		if target := rev - s.window; target-compact >= s.compactStep {
			_ = batch.DeleteRange(logKey(compact+1, 0), logKey(target+1, 0), nil)
			_ = batch.Set(compactRevKey, encodeRev(target), nil)
			compact = target
		}
		synced := time.Now()
		err := batch.Commit(pebble.Sync)
		s.stats.fsync.ObserveSince(synced)
		s.stats.groupSize.Observe(int64(len(group)))
		if err != nil {
			s.failed = fmt.Errorf("commit revisions %d-%d: %w", start+1, rev, err)
			s.log.WithError(err).WithField("revisions", fmt.Sprintf("%d-%d", start+1, rev)).Error("commit failed")
			for i := range results {
				if results[i].err == nil {
					results[i] = result{err: fmt.Errorf("apply: %w", s.failed)}
				}
			}
			rev = start
		} else {
			s.publish(events, rev, compact)
		}
	}
	for i, r := range group {
		r.done <- results[i]
	}
}

// op is one command made concrete: its event and its stored value (nil = delete).
type op struct {
	ev    Event
	value []byte
}

// materialize decides one transaction at revision rev and, if accepted, builds its
// items and values without touching the batch or the overlay, so that a rejected
// transaction leaves no trace.
func (s *Store) materialize(rev int64, r *request) ([]op, error) {
	var local map[Key]*Item // this transaction's earlier commands; nil item = deleted
	lookup := func(k Key) *Item {
		if it, ok := local[k]; ok {
			return it
		}
		if it, ok := s.overlay[k]; ok {
			return it
		}
		return s.latest[k]
	}
	state := func(k Key) objState {
		it := lookup(k)
		if it == nil {
			return objState{}
		}
		return objState{exists: true, rev: it.Revision, uid: it.uid}
	}
	typesOf, err := decide(state, rev, r.cmds, r.uids)
	if err != nil {
		return nil, err
	}
	ops := make([]op, len(r.cmds))
	for i, c := range r.cmds {
		var it *Item
		if typesOf[i] == Deleted {
			if it, err = tombstone(lookup(c.Key), rev); err != nil {
				return nil, fmt.Errorf("delete %s: %w", keyString(c.Key), err)
			}
			ops[i] = op{ev: Event{Type: Deleted, Item: it}}
		} else {
			value, js, err := stamp(c.Object, rev, r.enc[i])
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", opName(c.Op), keyString(c.Key), err)
			}
			it = &Item{Key: c.Key, Revision: rev, Object: c.Object, uid: r.uids[i], json: js}
			ops[i] = op{ev: Event{Type: typesOf[i], Item: it}, value: value}
		}
		if len(r.cmds) > 1 {
			if local == nil {
				local = make(map[Key]*Item, len(r.cmds))
			}
			if typesOf[i] == Deleted {
				local[c.Key] = nil
			} else {
				local[c.Key] = it
			}
		}
	}
	return ops, nil
}

// publish makes a durable group visible to reads, snapshots and watchers.
func (s *Store) publish(events []Event, rev, compact int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range events {
		k := ev.Item.Key
		t := s.tree(k.Resource)
		if ev.Type == Deleted {
			delete(s.latest, k)
			t.Delete(ev.Item)
		} else {
			s.latest[k] = ev.Item
			t.ReplaceOrInsert(ev.Item)
		}
		s.modRev[k.Resource] = ev.Item.Revision
	}
	s.rev.Store(rev)
	s.advanceLog(events, compact, false)
}
