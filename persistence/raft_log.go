package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/raft"
)

// The Raft log and stable store live in the store's own Pebble DB, under keys of
// their own (see keys.go):
//
//	r/l/<index: 8 bytes BE> -> one Raft log entry (raftLogFormat)
//	r/s/<key>               -> one stable-store value (current term, last vote)
//
// Every write is synced: a log entry a member acknowledged is durable. The FSM's own
// writes are not synced (the log is); it stores its last applied index with them.
var (
	raftLogPrefix    = []byte("r/l/")
	raftStablePrefix = []byte("r/s/")
	appliedKey       = []byte("m/applied") // FSM: last Raft index applied (8 bytes BE)
	syncKey          = []byte("m/sync")    // a synced write of it makes all earlier writes durable
)

// errStableNotFound is the stable store's answer for a missing key: hashicorp/raft
// recognises it by its text, "not found".
var errStableNotFound = errors.New("not found")

const raftLogFormat byte = 1

// raftLog is raft.LogStore and raft.StableStore on Pebble.
type raftLog struct {
	db *pebble.DB

	mu          sync.Mutex // guards first and last
	first, last uint64
}

var (
	_ raft.LogStore    = (*raftLog)(nil)
	_ raft.StableStore = (*raftLog)(nil)
)

func newRaftLog(db *pebble.DB) (*raftLog, error) {
	l := &raftLog{db: db}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: raftLogPrefix, UpperBound: prefixEnd(raftLogPrefix)})
	if err != nil {
		return nil, fmt.Errorf("raft log: %w", err)
	}
	if it.First() {
		l.first = binary.BigEndian.Uint64(it.Key()[len(raftLogPrefix):])
	}
	if it.Last() {
		l.last = binary.BigEndian.Uint64(it.Key()[len(raftLogPrefix):])
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("raft log: %w", err)
	}
	return l, nil
}

func raftLogKey(index uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(raftLogPrefix)+8), raftLogPrefix...), index)
}

// FirstIndex is the first index written, 0 for none.
func (l *raftLog) FirstIndex() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first, nil
}

// LastIndex is the last index written, 0 for none.
func (l *raftLog) LastIndex() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, nil
}

// GetLog reads one entry; a missing one is raft.ErrLogNotFound.
func (l *raftLog) GetLog(index uint64, out *raft.Log) error {
	v, closer, err := l.db.Get(raftLogKey(index))
	if errors.Is(err, pebble.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return fmt.Errorf("raft log %d: %w", index, err)
	}
	defer closer.Close()
	if err := decodeRaftLog(index, v, out); err != nil {
		return fmt.Errorf("raft log %d: %w", index, err)
	}
	return nil
}

// StoreLog stores one entry.
func (l *raftLog) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// StoreLogs stores entries with one synced batch.
func (l *raftLog) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	b := l.db.NewBatch()
	defer b.Close()
	var buf []byte
	lo, hi := logs[0].Index, logs[0].Index
	for _, e := range logs {
		buf = encodeRaftLog(buf[:0], e)
		if err := b.Set(raftLogKey(e.Index), buf, nil); err != nil {
			return fmt.Errorf("raft log: %w", err)
		}
		lo, hi = min(lo, e.Index), max(hi, e.Index)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("raft log: store %d-%d: %w", lo, hi, err)
	}
	l.mu.Lock()
	if l.first == 0 || lo < l.first {
		l.first = lo
	}
	l.last = max(l.last, hi)
	l.mu.Unlock()
	return nil
}

// DeleteRange deletes the entries in [lo, hi].
func (l *raftLog) DeleteRange(lo, hi uint64) error {
	if err := l.db.DeleteRange(raftLogKey(lo), raftLogKey(hi+1), pebble.Sync); err != nil {
		return fmt.Errorf("raft log: delete %d-%d: %w", lo, hi, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case lo <= l.first && hi >= l.last:
		l.first, l.last = 0, 0
	case lo <= l.first && hi >= l.first:
		l.first = hi + 1
	case hi >= l.last && lo <= l.last:
		l.last = lo - 1
	}
	return nil
}

// Set stores a stable value.
func (l *raftLog) Set(key, val []byte) error {
	if err := l.db.Set(append(append([]byte(nil), raftStablePrefix...), key...), val, pebble.Sync); err != nil {
		return fmt.Errorf("raft stable %s: %w", key, err)
	}
	return nil
}

// Get reads a stable value; a missing one is an error whose text is "not found".
func (l *raftLog) Get(key []byte) ([]byte, error) {
	v, closer, err := l.db.Get(append(append([]byte(nil), raftStablePrefix...), key...))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, errStableNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("raft stable %s: %w", key, err)
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

// SetUint64 stores a stable number.
func (l *raftLog) SetUint64(key []byte, val uint64) error {
	return l.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 reads a stable number; a missing one is an error whose text is "not found".
func (l *raftLog) GetUint64(key []byte) (uint64, error) {
	v, err := l.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raft stable %s: bad value of %d bytes", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// encodeRaftLog appends e: format, term, type, appended-at, data, extensions.
func encodeRaftLog(b []byte, e *raft.Log) []byte {
	b = append(b, raftLogFormat)
	b = binary.AppendUvarint(b, e.Term)
	b = append(b, byte(e.Type))
	var at int64
	if !e.AppendedAt.IsZero() {
		at = e.AppendedAt.UnixNano()
	}
	b = binary.AppendVarint(b, at)
	b = binary.AppendUvarint(b, uint64(len(e.Data)))
	b = append(b, e.Data...)
	b = binary.AppendUvarint(b, uint64(len(e.Extensions)))
	return append(b, e.Extensions...)
}

// decodeRaftLog decodes an entry stored at key index; the slices it sets are copies.
func decodeRaftLog(index uint64, v []byte, out *raft.Log) error {
	d := decoder{b: v}
	if d.byte() != raftLogFormat {
		return errors.New("unknown entry format")
	}
	term := d.uvarint()
	typ := raft.LogType(d.byte())
	at := d.varint()
	data := d.bytes()
	ext := d.bytes()
	if d.err != nil {
		return d.err
	}
	*out = raft.Log{Index: index, Term: term, Type: typ, Data: clone(data), Extensions: clone(ext)}
	if at != 0 {
		out.AppendedAt = time.Unix(0, at)
	}
	return nil
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// decoder reads the varint-framed encodings of this package; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("truncated or malformed encoding")
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return x
}

// bytes returns the next length-prefixed bytes, sharing the input.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) string() string { return string(d.bytes()) }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
