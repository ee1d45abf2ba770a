package persistence

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/google/btree"
	"github.com/hashicorp/raft"
	"k8s.io/apimachinery/pkg/types"
)

// A Raft log entry of the store carries a group of transactions ("many commands per
// entry"):
//
//	version byte (1)
//	origin: replica name (string), incarnation (uvarint), sequence number (uvarint)
//	transactions (uvarint count), each: commands (uvarint count), each:
//	  op byte, resource, namespace, name, precondition uid (strings),
//	  precondition resourceVersion (uvarint), uid (string),
//	  the object's JSON with the placeholder resourceVersion (bytes; empty for deletes)
//
// Strings and bytes are uvarint-length-prefixed. An entry with no transaction is the
// one a new leader proposes to commit an entry of its term.
const entryVersion byte = 1

// entryOrigin names the replica (and its incarnation) that proposed an entry, and
// the entry's number there: the origin answers its callers when it applies it.
type entryOrigin struct {
	name string
	inc  uint64
	seq  uint64
}

// encodeEntry encodes a group of queued transactions as one entry.
func encodeEntry(o entryOrigin, group []*request) []byte {
	n := 32 + len(o.name)
	for _, r := range group {
		for i, c := range r.cmds {
			n += 48 + len(c.Key.Resource) + len(c.Key.Namespace) + len(c.Key.Name) + len(c.Pre.UID) +
				len(r.uids[i]) + len(r.enc[i].json)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, entryVersion)
	b = appendString(b, o.name)
	b = binary.AppendUvarint(b, o.inc)
	b = binary.AppendUvarint(b, o.seq)
	b = binary.AppendUvarint(b, uint64(len(group)))
	for _, r := range group {
		b = binary.AppendUvarint(b, uint64(len(r.cmds)))
		for i, c := range r.cmds {
			b = append(b, byte(c.Op))
			b = appendString(b, c.Key.Resource)
			b = appendString(b, c.Key.Namespace)
			b = appendString(b, c.Key.Name)
			b = appendString(b, string(c.Pre.UID))
			b = binary.AppendUvarint(b, uint64(c.Pre.ResourceVersion))
			b = appendString(b, string(r.uids[i]))
			b = appendBytes(b, r.enc[i].json)
		}
	}
	return b
}

// decodeEntryHeader reads the origin of an entry and returns the decoder at its
// transactions.
func decodeEntryHeader(data []byte) (entryOrigin, decoder, error) {
	d := decoder{b: data}
	if v := d.byte(); d.err == nil && v != entryVersion {
		return entryOrigin{}, d, fmt.Errorf("unknown entry version %d", v)
	}
	o := entryOrigin{name: d.string(), inc: d.uvarint(), seq: d.uvarint()}
	return o, d, d.err
}

// decodeTxns reads an entry's transactions; objects are left to decodeObjects.
func decodeTxns(d *decoder) ([]*request, error) {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		return nil, errors.New("malformed entry")
	}
	txns := make([]*request, 0, n)
	for range n {
		m := d.uvarint()
		if d.err != nil || m == 0 || m > uint64(len(d.b)) {
			return nil, errors.New("malformed entry")
		}
		r := &request{cmds: make([]Command, m), enc: make([]encoded, m), uids: make([]types.UID, m)}
		for i := range r.cmds {
			c := &r.cmds[i]
			c.Op = Op(d.byte())
			c.Key = Key{Resource: d.string(), Namespace: d.string(), Name: d.string()}
			c.Pre.UID = types.UID(d.string())
			c.Pre.ResourceVersion = int64(d.uvarint())
			r.uids[i] = types.UID(d.string())
			if js := d.bytes(); len(js) > 0 {
				r.enc[i] = encoded{json: js, at: rvValueAt(js, rvPlaceholder)}
			}
		}
		if d.err != nil {
			return nil, d.err
		}
		txns = append(txns, r)
	}
	return txns, nil
}

// decodeObjects decodes the objects of creates and updates, on all cores.
func (s *Store) decodeObjects(txns []*request) error {
	type job struct {
		r *request
		i int
	}
	var jobs []job
	for _, r := range txns {
		for i, c := range r.cmds {
			if (c.Op == OpCreate || c.Op == OpUpdate) && r.enc[i].json != nil {
				jobs = append(jobs, job{r, i})
			}
		}
	}
	if len(jobs) > 0 && s.newObject == nil {
		return errors.New("decode: Options.NewObject is nil")
	}
	return onAllCores(len(jobs), 64, func(k int) error {
		j := jobs[k]
		c := &j.r.cmds[j.i]
		obj, err := s.newObject(c.Key.Resource)
		if err == nil {
			err = unmarshalObject(j.r.enc[j.i].json, obj)
		}
		if err != nil {
			return fmt.Errorf("decode %s: %w", keyString(c.Key), err)
		}
		c.Object = obj
		return nil
	})
}

// fsm is the replicated store's raft.BatchingFSM: the store's own apply path.
type fsm struct {
	s *Store
	r *replica
}

var _ raft.BatchingFSM = fsm{}

// Apply applies one entry.
func (f fsm) Apply(l *raft.Log) interface{} { return f.ApplyBatch([]*raft.Log{l})[0] }

// ApplyBatch applies committed entries in order with one (unsynced) Pebble batch,
// which also records the last applied index; entries at or below the recorded one
// (a replay after a restart) are skipped. The origin of an entry answers its
// callers from it once it is published.
func (f fsm) ApplyBatch(logs []*raft.Log) []interface{} {
	s, r := f.s, f.r
	out := make([]interface{}, len(logs))
	if s.failed != nil {
		return out
	}
	type answer struct {
		reqs    []*request
		results []result
	}
	var answers []answer
	var got time.Time // when the first entry of a caller that asks for its timing came (timing.go)
	var g groupWrite
	s.beginGroup(&g)
	defer g.batch.Close()
	last := s.appliedIndex
	for _, l := range logs {
		if l.Index <= s.appliedIndex {
			continue
		}
		last = l.Index
		if l.Type != raft.LogCommand {
			continue
		}
		origin, d, err := decodeEntryHeader(l.Data)
		if err != nil {
			s.log.WithError(err).WithField("index", l.Index).Error("raft entry rejected")
			continue
		}
		txns := r.takePending(origin)
		mine := txns != nil
		if !mine {
			if txns, err = decodeTxns(&d); err == nil {
				err = s.decodeObjects(txns)
			}
			if err != nil {
				// The same bytes fail the same way on every replica but the origin,
				// which did not decode: the replicas would differ. Stop this one.
				r.fail(fmt.Errorf("raft entry %d: %w", l.Index, err))
				for _, a := range answers {
					for _, t := range a.reqs {
						t.done <- result{err: fmt.Errorf("apply: %w: %w", ErrUnknownOutcome, s.failed)}
					}
				}
				return out
			}
		}
		if mine && timedGroup(txns) {
			if got.IsZero() {
				got = time.Now()
			}
			for _, t := range txns {
				if t.timing != nil {
					t.timing.Replicate = got.Sub(t.timing.proposed)
				}
			}
		}
		results := make([]result, len(txns))
		for i, t := range txns {
			results[i] = s.writeTxn(&g, t)
		}
		if mine {
			answers = append(answers, answer{txns, results})
		}
	}
	if last > s.appliedIndex {
		compact := s.endGroup(&g)
		_ = g.batch.Set(appliedKey, binary.BigEndian.AppendUint64(nil, last), nil)
		if err := g.batch.Commit(pebble.NoSync); err != nil {
			r.fail(fmt.Errorf("apply raft entries to %d: %w", last, err))
			for _, a := range answers {
				for _, t := range a.reqs {
					t.done <- result{err: fmt.Errorf("apply: %w: %w", ErrUnknownOutcome, s.failed)}
				}
			}
			return out
		}
		if g.rev > g.start {
			s.publish(g.events, g.rev, compact)
		}
		s.appliedIndex = last
		r.setApplied(last)
	}
	if !got.IsZero() {
		applied := time.Since(got)
		for _, a := range answers {
			for i, t := range a.reqs {
				if t.timing != nil {
					t.timing.Apply, t.timing.Revision = applied, a.results[i].rev
				}
			}
		}
	}
	for _, a := range answers {
		for i, t := range a.reqs {
			t.done <- a.results[i]
		}
	}
	return out
}

// Snapshot captures the state as of the last applied entry: a Pebble snapshot, read
// by Persist while the FSM goes on.
func (f fsm) Snapshot() (raft.FSMSnapshot, error) {
	s := f.s
	return &fsmSnapshot{s: s, snap: s.db.NewSnapshot(), applied: s.appliedIndex, rev: s.rev.Load()}, nil
}

// Restore replaces the store's contents with a snapshot's (an install from the leader).
func (f fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := f.s.restore(rc); err != nil {
		return err
	}
	f.r.setApplied(f.s.appliedIndex)
	return nil
}

// The snapshot stream: version byte, applied index, revision (uvarints), then per
// object its key and stored value (bytes), then an empty key.
const snapshotVersion byte = 1

type fsmSnapshot struct {
	s       *Store
	snap    *pebble.Snapshot
	applied uint64
	rev     int64
}

// Persist first makes the FSM's state durable (the log will be truncated up to the
// snapshot), then streams the objects.
func (sn *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	err := sn.persist(sink)
	if err != nil {
		return errors.Join(err, sink.Cancel())
	}
	return sink.Close()
}

func (sn *fsmSnapshot) persist(sink io.Writer) error {
	if err := sn.s.db.Set(syncKey, nil, pebble.Sync); err != nil {
		return fmt.Errorf("snapshot: sync state: %w", err)
	}
	w := bufio.NewWriterSize(sink, 1<<20)
	hdr := []byte{snapshotVersion}
	hdr = binary.AppendUvarint(hdr, sn.applied)
	hdr = binary.AppendUvarint(hdr, uint64(sn.rev))
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	it, err := sn.snap.NewIter(&pebble.IterOptions{LowerBound: objPrefix, UpperBound: prefixEnd(objPrefix)})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	var buf []byte
	for ok := it.First(); ok; ok = it.Next() {
		buf = appendBytes(buf[:0], it.Key())
		buf = appendBytes(buf, it.Value())
		if _, err := w.Write(buf); err != nil {
			return errors.Join(fmt.Errorf("snapshot: %w", err), it.Close())
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := w.WriteByte(0); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

func (sn *fsmSnapshot) Release() { _ = sn.snap.Close() }

// readSnapshotHeader reads the applied index and revision of a snapshot stream.
func readSnapshotHeader(r *bufio.Reader) (applied uint64, rev int64, err error) {
	v, err := r.ReadByte()
	if err == nil && v != snapshotVersion {
		err = fmt.Errorf("unknown snapshot version %d", v)
	}
	if err == nil {
		applied, err = binary.ReadUvarint(r)
	}
	var urev uint64
	if err == nil {
		urev, err = binary.ReadUvarint(r)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("snapshot header: %w", err)
	}
	return applied, int64(urev), nil
}

// restore replaces the objects with the snapshot's in one synced batch (the change
// log is dropped: its window starts at the snapshot's revision), then the in-memory
// state; watchers whose next event is gone get ErrCompacted.
func (s *Store) restore(rc io.Reader) error {
	br := bufio.NewReaderSize(rc, 1<<20)
	applied, rev, err := readSnapshotHeader(br)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(objPrefix, prefixEnd(objPrefix), nil)
	_ = b.DeleteRange(logPrefix, prefixEnd(logPrefix), nil)
	var items []*Item
	for {
		k, err := readFramed(br)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if len(k) == 0 {
			break
		}
		v, err := readFramed(br)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		key, err := parseObjKey(k)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		irev, js, err := decodeObjectValue(v)
		if err != nil {
			return fmt.Errorf("snapshot: object %s: %w", keyString(key), err)
		}
		_ = b.Set(k, v, nil)
		items = append(items, &Item{Key: key, Revision: irev, newObject: s.newObject, json: js})
	}
	if err := s.decodeAll(items); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	_ = b.Set(revKey, encodeRev(rev), nil)
	_ = b.Set(compactRevKey, encodeRev(rev), nil)
	_ = b.Set(appliedKey, binary.BigEndian.AppendUint64(nil, applied), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("snapshot: commit: %w", err)
	}

	latest := make(map[Key]*Item, len(items))
	trees := make(map[string]*btree.BTreeG[*Item])
	for _, it := range items {
		latest[it.Key] = it
		t := trees[it.Key.Resource]
		if t == nil {
			t = btree.NewG(32, itemLess)
			trees[it.Key.Resource] = t
		}
		t.ReplaceOrInsert(it)
	}
	owned := indexOwners(latest)
	s.mu.Lock()
	old := s.rev.Load()
	modRev := make(map[string]int64)
	for res := range s.trees {
		modRev[res] = rev // conservatively: every resource may have changed
	}
	for res := range trees {
		modRev[res] = rev
	}
	s.latest, s.trees, s.modRev, s.modFloor, s.owners = latest, trees, modRev, rev, owned
	clear(s.clones) // clones of the replaced trees
	s.superseded = nil
	s.claimOwner = s.rebuildClaims(trees)
	s.rev.Store(rev)
	cur := s.changes.Load()
	next := &logView{firstSeq: cur.nextSeq(), compactRev: rev, notify: make(chan struct{})}
	if rev != old {
		next.firstSeq++ // every watcher's position is gone
	}
	s.changes.Store(next)
	close(cur.notify)
	s.mu.Unlock()
	s.appliedIndex = applied
	s.log.WithField("revision", rev).WithField("index", applied).Info("restored from a raft snapshot")
	return nil
}

func readFramed(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}
