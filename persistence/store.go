package persistence

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/google/btree"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/api/meta"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultChangeLogWindow is the number of revisions the change log keeps by default.
const DefaultChangeLogWindow = 100000

// Options configure a Store.
type Options struct {
	Dir             string // data directory; ignored when InMemory
	InMemory        bool   // real Pebble on an in-memory filesystem (tests)
	ChangeLogWindow int64  // revisions kept in the change log for watches; 0 means the default (100000)
	// NewObject returns an empty object of the resource's Go type (e.g. &corev1.Pod{} for "pods");
	// the store uses it to decode what it reads back at start.
	NewObject func(resource string) (kruntime.Object, error)
	// Replication, when set, makes the store one replica of a Raft cluster.
	Replication *Replication
	// Claims, when set, names the values an object holds that no other object may
	// hold at the same time (claims.go); it must be a pure function of the object,
	// the same on every replica.
	Claims func(resource string, obj kruntime.Object) []string
	// ClaimResources, when set, are the only resources whose objects Claims can find
	// claims in: the others' objects are not given to it (nor decoded for it when lean).
	ClaimResources []string
	// LeanAfter: a current object no one read for between one and two of these is
	// kept as its JSON alone and decoded again when next read (lean.go). 0 means
	// DefaultLeanAfter; a negative value keeps every current object decoded.
	LeanAfter time.Duration

	fs vfs.FS // tests: the filesystem to open Dir on (strict or fault-injecting)
}

// Store is the durable, revisioned object store. One committer goroutine applies
// every transaction (group commit: one Pebble batch and one fsync for all the
// transactions queued meanwhile), then publishes them to the in-memory state that
// serves reads, snapshots and watches.
type Store struct {
	db          *pebble.DB
	newObject   func(string) (kruntime.Object, error)
	claims      func(string, kruntime.Object) []string
	claimed     map[string]bool // nil: every resource may claim
	window      int64
	compactStep int64
	shedAge     int64 // revisions after which a superseded version is shed (shedEncodings)
	log         logrus.FieldLogger

	queue   chan *request
	stopped chan struct{}

	closeMu sync.RWMutex // guards closed against Apply sending on queue
	closed  bool

	// Owned by the committer goroutine.
	overlay      map[Key]*Item          // effects of the group being committed; nil item = deleted
	claimOverlay map[string]claimHolder // the group's claims taken and given back (claims.go)
	failed       error                  // a failed commit leaves the disk state unknown: refuse writes

	rev atomic.Int64 // last published revision

	mu         sync.RWMutex // guards what follows; the committer writes under it
	latest     map[Key]*Item
	claimOwner map[string]Key // who holds each claim (claims.go)
	trees      map[string]*btree.BTreeG[*Item]
	owners     owners                       // the current objects by owner (owners.go)
	modRev     map[string]int64             // per resource: revision of its last change
	modFloor   int64                        // modRev is exact only for changes after this revision
	snaps      snapshotCache                // retained for SnapshotAt (snapshot.go)
	clones     map[string]*retainedSnapshot // per resource, the last clone not retained

	// changes is the change log as watchers read it, without taking mu (see logView);
	// only the publishing goroutine advances it, after releasing mu (publish).
	changes atomic.Pointer[logView]
	shedRev int64 // the log's items up to this revision have been through shedEncodings; the publisher's
	// superseded are the versions the publisher replaced (or deleted) that the change
	// log may still hold decoded, for shedEncodings; the publisher's, under mu.
	superseded []*Item

	replica      *replica // nil: a store of one
	appliedIndex uint64   // replicated: the last Raft index applied (owned by the FSM)

	stats     storeStats   // stats.go
	leanCount atomic.Int64 // current objects lean after the last sweep (lean.go)
	sweeps    atomic.Int64 // sweeps so far (lean.go)
}

// Open opens (or creates) a store and loads its state.
func Open(opts Options) (*Store, error) {
	window := opts.ChangeLogWindow
	if window <= 0 {
		window = DefaultChangeLogWindow
	}
	fs, dir := opts.fs, opts.Dir
	if fs == nil {
		fs = vfs.Default
		if opts.InMemory {
			fs, dir = vfs.NewMem(), "store"
		}
	}
	if dir == "" {
		return nil, fmt.Errorf("open store: %w: Options.Dir is empty", ErrInvalid)
	}
	if err := makeDurableDir(fs, dir); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	log := logrus.WithField("component", "persistence")
	db, err := pebble.Open(dir, &pebble.Options{
		FS: fs,
		// A memtable's arena is allocated whole, on the Go heap (the binary is built
		// without cgo), and up to three are held (the mutable one, one being flushed,
		// one kept for reuse): at 64 MiB that was 192 MB of the live heap, every byte
		// of which the GC's heap goal counts. Smaller memtables mean more, smaller
		// flushes, which cost about the same CPU per byte.
		MemTableSize: 16 << 20,
		// Reads are served from memory; Pebble is read back only at Open. So L0 may
		// hold many files before they are compacted: fewer, larger compactions cost
		// less CPU, and the read amplification they would prevent is paid once, at start.
		L0CompactionThreshold:       16,
		L0CompactionFileThreshold:   2000,
		L0StopWritesThreshold:       64,
		MemTableStopWritesThreshold: 4,
		// Uncompressed tables: Snappy was a third of the compactions' CPU in the
		// envelope's steady state (its change-log entries and node heartbeats flushed
		// and compacted again), and its decoding a part of every start's load. The
		// JSON it saved is disk space, which the store has plenty of.
		Levels: []pebble.LevelOptions{{Compression: pebble.NoCompression}},

		Logger: pebbleLogger{log},
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	s := &Store{
		db:           db,
		newObject:    opts.NewObject,
		claims:       opts.Claims,
		claimed:      claimResources(opts.ClaimResources),
		claimOverlay: make(map[string]claimHolder),
		window:       window,
		compactStep:  max(1, window/64),
		shedAge:      max(1, window/shedFraction),
		log:          log,
		queue:        make(chan *request, 4096),
		stopped:      make(chan struct{}),
		overlay:      make(map[Key]*Item),
		latest:       make(map[Key]*Item),
		trees:        make(map[string]*btree.BTreeG[*Item]),
		owners:       make(owners),
		modRev:       make(map[string]int64),
		clones:       make(map[string]*retainedSnapshot),
		stats:        newStoreStats(),
	}
	if err := s.load(); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", dir, err), db.Close())
	}
	if opts.Replication != nil {
		r, err := openReplica(s, *opts.Replication, dir, opts.InMemory || opts.fs != nil)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("open store %s: %w", dir, err), db.Close())
		}
		s.replica = r
	}
	go s.run()
	leanAfter := opts.LeanAfter
	if leanAfter == 0 {
		leanAfter = DefaultLeanAfter
	}
	if leanAfter > 0 {
		go s.sweeper(leanAfter)
	}
	return s, nil
}

// Close stops the committer after it has committed what was queued, wakes every
// watcher (their Next returns ErrClosed) and closes Pebble. Reads keep working on
// the last state.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	close(s.queue)
	s.closeMu.Unlock()
	if s.replica != nil {
		// Raft first: the committer may wait for room in the pipeline, which a
		// replica without a majority would never make.
		s.replica.stopRaft()
	}
	<-s.stopped
	if s.replica != nil {
		s.replica.shutdown()
	}

	s.mu.Lock()
	s.advanceLog(nil, 0, true)
	s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Revision is the last committed revision.
func (s *Store) Revision() int64 { return s.rev.Load() }

// Apply commits the commands atomically as one transaction with one new revision,
// and returns only once it is durable (fsync, shared with concurrent callers).
// It returns the revision and, per command, the stored object (nil for deletes):
// that object is now shared by the store's cache and must not be mutated.
// Errors wrap ErrNotFound, ErrAlreadyExists, ErrConflict or ErrInvalid and change
// nothing. ctx bounds only the wait for a place in the queue: once queued, the
// transaction's outcome is always returned, never an ambiguous timeout. A ctx made
// by WithTiming gets where the time went (timing.go).
//
// On a replicated store the leader applies: a transaction is acknowledged once its
// Raft entry is committed on a majority and applied here; if the leader loses its
// leadership (or stops) while the entry is in flight, the error wraps
// ErrUnknownOutcome: it may or may not have been applied. A follower forwards the
// transaction to the leader's peer port (POST /raft/apply), which applies it as
// above, and returns once its own replica has applied that revision: a read here
// right after sees the write, and the objects returned are this replica's (shared
// with its cache). The leader's errors keep their sentinels and message. With no
// leader known the error wraps ErrNotLeader (nothing was sent: retry); when the
// leader is lost after the transaction was sent, or ctx ends after it was sent and
// before the answer or before this replica applied the revision, it wraps
// ErrUnknownOutcome (ctx thus bounds the whole of a follower's Apply).
func (s *Store) Apply(ctx context.Context, cmds ...Command) (int64, []kruntime.Object, error) {
	if len(cmds) == 0 {
		return 0, nil, fmt.Errorf("apply: %w: empty transaction", ErrInvalid)
	}
	start := time.Now()
	if s.replica != nil {
		if err := s.replica.admit(cmds); err != nil {
			return 0, nil, err
		}
	}
	r, err := prepare(cmds)
	if err != nil {
		return 0, nil, err
	}
	if r.timing = timingOf(ctx); r.timing != nil {
		r.timing.Start = time.Now()
	}
	if s.replica != nil && !s.replica.isLeader() {
		rev, objs, err := s.replica.forwardApply(ctx, r)
		s.stats.apply.ObserveSince(start)
		return rev, objs, err
	}
	if err := s.enqueue(ctx, r); err != nil {
		return 0, nil, err
	}
	res := <-r.done
	if s.replica != nil && errors.Is(res.err, ErrNotLeader) && ctx.Err() == nil {
		// Not proposed (the leadership moved meanwhile): the new leader may take it.
		res.rev, res.objs, res.err = s.replica.forwardApply(ctx, r)
	}
	s.stats.apply.ObserveSince(start)
	return res.rev, res.objs, res.err
}

// prepare checks a transaction's commands and pre-encodes their objects (on the
// caller's goroutine, so that concurrent Apply calls encode in parallel).
func prepare(cmds []Command) (*request, error) {
	r := &request{
		cmds: cmds,
		enc:  make([]encoded, len(cmds)),
		uids: make([]types.UID, len(cmds)),
		done: make(chan result, 1),
	}
	for i, c := range cmds {
		if c.Op != OpCreate && c.Op != OpUpdate {
			continue
		}
		uid, err := checkObject(c)
		if err != nil {
			return nil, err
		}
		r.uids[i] = uid
		if r.enc[i], err = preEncode(c.Object); err != nil {
			return nil, fmt.Errorf("%s %s: %w", opName(c.Op), keyString(c.Key), err)
		}
	}
	return r, nil
}

// checkObject checks that a create's or update's object is there and is the key's,
// and returns its uid.
func checkObject(c Command) (types.UID, error) {
	if c.Object == nil {
		return "", fmt.Errorf("%s %s: %w: no object", opName(c.Op), keyString(c.Key), ErrInvalid)
	}
	acc, err := meta.Accessor(c.Object)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %w", opName(c.Op), keyString(c.Key), ErrInvalid, err)
	}
	if acc.GetName() != c.Key.Name || acc.GetNamespace() != c.Key.Namespace {
		return "", fmt.Errorf("%s %s: %w: object is %s/%s", opName(c.Op), keyString(c.Key),
			ErrInvalid, acc.GetNamespace(), acc.GetName())
	}
	return acc.GetUID(), nil
}

// enqueue hands a prepared transaction to the committer; its result comes on r.done.
func (s *Store) enqueue(ctx context.Context, r *request) error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return fmt.Errorf("apply: %w", ErrClosed)
	}
	select {
	case s.queue <- r:
		s.closeMu.RUnlock()
		return nil
	case <-ctx.Done():
		s.closeMu.RUnlock()
		return fmt.Errorf("apply: %w", ctx.Err())
	}
}

// Get returns the current item for key, or an error wrapping ErrNotFound.
func (s *Store) Get(key Key) (*Item, error) {
	s.mu.RLock()
	it := s.latest[key]
	s.mu.RUnlock()
	if it == nil {
		return nil, fmt.Errorf("get %s: %w", keyString(key), ErrNotFound)
	}
	return it, nil
}

// load reads the revision counters, the objects and the change log.
func (s *Store) load() error {
	rev, err := s.getRev(revKey)
	if err != nil {
		return err
	}
	compact, err := s.getRev(compactRevKey)
	if err != nil {
		return err
	}
	s.rev.Store(rev)
	s.modFloor = compact
	applied, err := s.getRev(appliedKey)
	if err != nil {
		return err
	}
	s.appliedIndex = uint64(applied)

	// The scans read Pebble on this goroutine while decoders turn the JSON into
	// objects on every core: decoding is most of a start's work, and overlapping
	// it with the reads keeps every core busy from the first object read.
	dec := newPipelineDecoder()
	var objs []*Item
	err = s.scan(objPrefix, prefixEnd(objPrefix), func(k, v []byte) error {
		key, err := parseObjKey(k)
		if err != nil {
			return err
		}
		irev, js, err := decodeObjectValue(v)
		if err != nil {
			return fmt.Errorf("object %s: %w", keyString(key), err)
		}
		it := &Item{Key: key, Revision: irev, newObject: s.newObject, json: js}
		objs = append(objs, it)
		dec.add(it)
		return nil
	})
	if err != nil {
		return errors.Join(fmt.Errorf("load objects: %w", err), dec.wait())
	}
	// The index needs only the keys, so it is built while the objects decode.
	for _, it := range objs {
		s.latest[it.Key] = it
		s.tree(it.Key.Resource).ReplaceOrInsert(it)
		s.modRev[it.Key.Resource] = max(s.modRev[it.Key.Resource], it.Revision)
	}

	var events []Event
	err = s.scan(logKey(compact+1, 0), prefixEnd(logPrefix), func(k, v []byte) error {
		erev, err := parseLogKey(k)
		if err != nil {
			return err
		}
		t, key, js, err := parseLogValue(v)
		if err != nil {
			return fmt.Errorf("log entry %d: %w", erev, err)
		}
		if t == Deleted {
			s.modRev[key.Resource] = max(s.modRev[key.Resource], erev)
		}
		// Share the item with the current state when the entry is its latest version:
		// a key and a revision name one write, whose object value and log entry were
		// committed in one batch (the length is compared as a cheap check).
		if cur := s.latest[key]; t != Deleted && cur != nil && cur.Revision == erev && len(cur.json) == len(js) {
			events = append(events, Event{Type: t, Item: cur})
			return nil
		}
		// An older version stays lean, its JSON alone, as shedEncodings leaves one:
		// a watcher from that far back decodes it when it reads it (revive).
		events = append(events, Event{Type: t, Item: s.oldVersion(key, erev, "", js)})
		return nil
	})
	if derr := dec.wait(); err != nil || derr != nil {
		return fmt.Errorf("load: %w", errors.Join(err, derr))
	}
	s.claimOwner = s.rebuildClaims(s.trees)
	s.owners = indexOwners(s.latest) // the objects are decoded now
	s.changes.Store(&logView{events: events, compactRev: compact, notify: make(chan struct{})})
	return nil
}

// decodeAll decodes the Object of every item from its JSON, on all cores.
func (s *Store) decodeAll(items []*Item) error {
	return onAllCores(len(items), 256, func(i int) error {
		return items[i].decode()
	})
}

// pipelineDecoder decodes items handed to it on GOMAXPROCS goroutines, in batches,
// while its caller goes on reading: see load.
type pipelineDecoder struct {
	batch []*Item
	work  chan []*Item
	wg    sync.WaitGroup
	mu    sync.Mutex
	errs  []error
}

// decodeBatch is how many items a decoder takes at a time: enough to make the
// channel's cost negligible, few enough to spread a small store over the cores.
const decodeBatch = 256

func newPipelineDecoder() *pipelineDecoder {
	d := &pipelineDecoder{work: make(chan []*Item, 4*runtime.GOMAXPROCS(0))}
	for range runtime.GOMAXPROCS(0) {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for batch := range d.work {
				for _, it := range batch {
					if err := it.decode(); err != nil {
						d.mu.Lock()
						d.errs = append(d.errs, err)
						d.mu.Unlock()
					}
				}
			}
		}()
	}
	return d
}

// add queues it for decoding; it must not be read until wait returns.
func (d *pipelineDecoder) add(it *Item) {
	d.batch = append(d.batch, it)
	if len(d.batch) == decodeBatch {
		d.work <- d.batch
		d.batch = make([]*Item, 0, decodeBatch)
	}
}

// wait decodes what is left, stops the decoders and returns their errors, joined.
func (d *pipelineDecoder) wait() error {
	if len(d.batch) > 0 {
		d.work <- d.batch
		d.batch = nil
	}
	close(d.work)
	d.wg.Wait()
	return errors.Join(d.errs...)
}

// onAllCores calls fn(i) for i in [0, n) on up to GOMAXPROCS goroutines, one per
// perWorker items at least; each goroutine stops at its first error, and the errors
// are joined.
func onAllCores(n, perWorker int, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/perWorker))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := fn(i); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// makeDurableDir creates dir and syncs its parent, so that the directory itself (and
// with it every acknowledged write) survives a crash.
func makeDurableDir(fs vfs.FS, dir string) error {
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	parent := fs.PathDir(dir)
	if parent == "" {
		parent = "."
	}
	d, err := fs.OpenDir(parent)
	if err != nil {
		return fmt.Errorf("open parent directory: %w", err)
	}
	if err := d.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync parent directory: %w", err), d.Close())
	}
	return d.Close()
}

// scan calls fn with a private copy of every key and value in [lower, upper).
func (s *Store) scan(lower, upper []byte, fn func(k, v []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("new iterator: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := append([]byte(nil), it.Key()...)
		v := append([]byte(nil), it.Value()...)
		if err := fn(k, v); err != nil {
			return errors.Join(err, it.Close())
		}
	}
	if err := it.Error(); err != nil {
		return errors.Join(fmt.Errorf("iterate: %w", err), it.Close())
	}
	return it.Close()
}

func (s *Store) getRev(key []byte) (int64, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	defer closer.Close()
	rev, err := decodeRev(v)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	return rev, nil
}

// tree returns the ordered index of one resource, creating it; callers hold mu for
// writing (or run before the committer starts).
func (s *Store) tree(resource string) *btree.BTreeG[*Item] {
	t := s.trees[resource]
	if t == nil {
		t = btree.NewG(32, itemLess)
		s.trees[resource] = t
	}
	return t
}

// itemLess orders items of one resource by (namespace, name).
func itemLess(a, b *Item) bool {
	if a.Key.Namespace != b.Key.Namespace {
		return a.Key.Namespace < b.Key.Namespace
	}
	return a.Key.Name < b.Key.Name
}

// pebbleLogger sends Pebble's messages to logrus.
type pebbleLogger struct{ log logrus.FieldLogger }

func (l pebbleLogger) Infof(format string, args ...interface{}) {
	l.log.WithField("detail", fmt.Sprintf(format, args...)).Debug("pebble")
}

func (l pebbleLogger) Fatalf(format string, args ...interface{}) {
	l.log.WithField("detail", fmt.Sprintf(format, args...)).Fatal("pebble fatal")
}

// now is the clock of snapshot retention.
var now = time.Now
