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
	// timing, when the caller asks for it (timing.go): written by whoever owns the
	// request (the committer, then the FSM) before it answers on done.
	timing *ApplyTiming
}

// size is the bytes of the request's objects' JSON.
func (r *request) size() int {
	n := 0
	for _, e := range r.enc {
		n += len(e.json)
	}
	return n
}

type result struct {
	rev  int64
	objs []runtime.Object
	err  error
}

// run is the committer: it takes every transaction queued so far as one group,
// commits it with one synced batch, publishes it, and replies.
// A replicated store's committer proposes the group as one Raft entry instead.
func (s *Store) run() {
	defer close(s.stopped)
	step, maxBytes := s.commit, 0
	if s.replica != nil {
		step, maxBytes = s.replica.propose, maxEntryBytes
	}
	group := make([]*request, 0, 256)
	for {
		r, ok := <-s.queue
		if !ok {
			return
		}
		if s.replica != nil {
			// Wait for room in the pipeline first: meanwhile the queue fills and
			// the entry carries more transactions.
			s.replica.acquire()
		}
		group = append(group[:0], r)
		size := r.size()
		open := true
	drain:
		for len(group) < maxGroup && (maxBytes == 0 || size < maxBytes) {
			select {
			case r, ok := <-s.queue:
				if !ok {
					open = false
					break drain
				}
				group = append(group, r)
				if maxBytes > 0 {
					size += r.size()
				}
			default:
				break drain
			}
		}
		step(group)
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
	var taken time.Time
	var fsync time.Duration
	timed := timedGroup(group)
	if timed {
		taken = time.Now()
	}
	results := make([]result, len(group))
	var g groupWrite
	s.beginGroup(&g)
	defer g.batch.Close()

	for gi, r := range group {
		if s.failed != nil {
			results[gi].err = fmt.Errorf("apply: %w", s.failed)
			continue
		}
		results[gi] = s.writeTxn(&g, r)
	}

	compact := s.endGroup(&g)
	if g.rev > g.start {
		synced := time.Now()
		err := g.batch.Commit(pebble.Sync)
		fsync = time.Since(synced)
		s.stats.fsync.Observe(int64(fsync))
		s.stats.groupSize.Observe(int64(len(group)))
		if err != nil {
			s.failed = fmt.Errorf("commit revisions %d-%d: %w", g.start+1, g.rev, err)
			s.log.WithError(err).WithField("revisions", fmt.Sprintf("%d-%d", g.start+1, g.rev)).Error("commit failed")
			for i := range results {
				if results[i].err == nil {
					results[i] = result{err: fmt.Errorf("apply: %w", s.failed)}
				}
			}
		} else {
			s.publish(g.events, g.rev, compact)
		}
	}
	if timed {
		applied := time.Since(taken) - fsync
		for i, r := range group {
			if t := r.timing; t != nil {
				t.Queued, t.Group, t.Fsync, t.Apply = taken.Sub(t.Start), len(group), fsync, applied
				t.Revision = results[i].rev
			}
		}
	}
	for i, r := range group {
		r.done <- results[i]
	}
}

// groupWrite is one group of transactions being written into one Pebble batch: the
// shared part of the single store's commit and the replicated store's FSM.
type groupWrite struct {
	batch  *pebble.Batch
	start  int64 // revision before the group
	rev    int64 // revision of the group's last accepted transaction
	events []Event
}

// beginGroup starts a group on the committed state (the overlay is the group's).
func (s *Store) beginGroup(g *groupWrite) {
	clear(s.overlay)
	clear(s.claimOverlay)
	g.batch = s.db.NewBatch()
	g.start = s.rev.Load()
	g.rev = g.start
	g.events = nil
}

// writeTxn decides one transaction against the state plus the group so far and, if
// accepted, writes it into the group's batch with the next revision.
func (s *Store) writeTxn(g *groupWrite, r *request) result {
	ops, claimed, err := s.materialize(g.rev+1, r)
	if err != nil {
		return result{err: err}
	}
	for _, c := range claimed {
		s.claimOverlay[c.claim] = claimHolder{key: c.key, held: c.held}
	}
	g.rev++
	rev, batch := g.rev, g.batch
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
			objs[i] = op.ev.Item.Object()
		}
		// The change-log entry is written straight into the batch: no key or value
		// of its own to allocate and copy on the committer's goroutine.
		d := batch.SetDeferred(logKeyLen, logValueLen(op.ev.Item.Key, op.ev.Item.json))
		appendLogKey(d.Key[:0], rev, i)
		appendLogValue(d.Value[:0], op.ev.Type, op.ev.Item.Key, op.ev.Item.json)
		_ = d.Finish()
		g.events = append(g.events, op.ev)
	}
	return result{rev: rev, objs: objs}
}

// endGroup writes the group's revision and, when due, the change log's compaction
// into the batch; it returns the compaction revision to publish.
func (s *Store) endGroup(g *groupWrite) int64 {
	compact := s.changes.Load().compactRev // only the committer (or FSM) publishes views
	if g.rev > g.start {
		_ = g.batch.Set(revKey, encodeRev(g.rev), nil)
		if target := g.rev - s.window; target-compact >= s.compactStep {
			_ = g.batch.DeleteRange(logKey(compact+1, 0), logKey(target+1, 0), nil)
			_ = g.batch.Set(compactRevKey, encodeRev(target), nil)
			compact = target
		}
	}
	return compact
}

// op is one command made concrete: its event and its stored value (nil = delete).
type op struct {
	ev    Event
	value []byte
}

// materialize decides one transaction at revision rev and, if accepted, builds its
// items and values and the claims it takes and gives back, without touching the
// batch or the overlays, so that a rejected transaction leaves no trace.
func (s *Store) materialize(rev int64, r *request) ([]op, []claimChange, error) {
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
		return nil, nil, err
	}
	var before, after []claimItem // only with a Claims function
	ops := make([]op, len(r.cmds))
	for i, c := range r.cmds {
		if s.claims != nil {
			if prev := lookup(c.Key); prev != nil {
				before = append(before, claimItem{key: c.Key, claims: s.itemClaims(prev)})
			} else {
				before = append(before, claimItem{key: c.Key})
			}
		}
		var it *Item
		if typesOf[i] == Deleted {
			if it, err = tombstone(lookup(c.Key), rev); err != nil {
				return nil, nil, fmt.Errorf("delete %s: %w", keyString(c.Key), err)
			}
			ops[i] = op{ev: Event{Type: Deleted, Item: it}}
			if s.claims != nil {
				after = append(after, claimItem{key: c.Key})
			}
		} else {
			value, js, err := stamp(c.Object, rev, r.enc[i])
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", opName(c.Op), keyString(c.Key), err)
			}
			if s.claims != nil {
				after = append(after, claimItem{key: c.Key, claims: s.claimsOf(c.Key, c.Object)})
			}
			it = &Item{Key: c.Key, Revision: rev, newObject: s.newObject, uid: r.uids[i], json: js}
			it.setObject(c.Object)
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
	if !anyClaims(before) && !anyClaims(after) { // most objects hold none
		return ops, nil, nil
	}
	claimed, err := checkClaims(before, after, s.groupHolder)
	if err != nil {
		return nil, nil, err
	}
	return ops, claimed, nil
}

// publish makes a durable group visible to reads, snapshots and watchers. The change
// log advances after the lock is released: its view is read without the lock, and
// compacting and shedding it now and then take long enough that every Get would
// wait for them. Until it advances, a watcher from the new revision finds nothing
// newer, as it should, and one from before waits for the notify. Only the goroutine
// that publishes writes s.latest, so shedding reads it without the lock.
func (s *Store) publish(events []Event, rev, compact int64) {
	s.mu.Lock()
	for _, ev := range events {
		s.publishClaims(ev)
		k := ev.Item.Key
		t := s.tree(k.Resource)
		prev := s.latest[k]
		if prev != nil && s.newObject != nil {
			s.superseded = append(s.superseded, prev)
		}
		if ev.Type == Deleted {
			s.owners.replace(prev, nil)
			delete(s.latest, k)
			t.Delete(ev.Item)
			if s.newObject != nil {
				s.superseded = append(s.superseded, ev.Item) // never current
			}
		} else {
			s.owners.replace(prev, ev.Item)
			s.latest[k] = ev.Item
			t.ReplaceOrInsert(ev.Item)
		}
		s.modRev[k.Resource] = ev.Item.Revision
	}
	s.rev.Store(rev)
	s.mu.Unlock()
	s.advanceLog(events, compact, false)
}
