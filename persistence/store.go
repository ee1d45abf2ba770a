package persistence

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// CONTRACT STUB: the persistence implementation replaces the bodies below; the
// exported names and signatures are what actors/ and gateway/ build against.

// Options configure a Store.
type Options struct {
	Dir             string // data directory; ignored when InMemory
	InMemory        bool   // real Pebble on an in-memory filesystem (tests)
	ChangeLogWindow int64  // revisions kept in the change log for watches; 0 means the default (100000)
	// NewObject returns an empty object of the resource's Go type (e.g. &corev1.Pod{} for "pods");
	// the store uses it to decode what it reads back at start.
	NewObject func(resource string) (runtime.Object, error)
}

// Store is the durable, revisioned object store.
type Store struct{}

// Item is one stored object at one revision. Object is shared and must never be
// mutated: DeepCopyObject it first.
type Item struct {
	Key      Key
	Revision int64
	Object   runtime.Object
}

// JSON returns the object's JSON encoding (with resourceVersion), computed once.
func (it *Item) JSON() []byte { panic("unimplemented") }

// Event is one change, in revision order. For Deleted, Item is the last state with
// Revision (and resourceVersion) set to the deletion's revision.
type Event struct {
	Type EventType
	Item *Item
}

// Snapshot is an immutable view of one resource at one revision.
type Snapshot struct{}

// Open opens (or creates) a store and loads its state.
func Open(opts Options) (*Store, error) { panic("unimplemented") }

// Close flushes and closes the store.
func (s *Store) Close() error { panic("unimplemented") }

// Revision is the last committed revision.
func (s *Store) Revision() int64 { panic("unimplemented") }

// Apply commits the commands atomically as one transaction with one new revision,
// and returns only once it is durable (fsync, shared with concurrent callers).
// It returns the revision and, per command, the stored object (nil for deletes).
// Errors wrap ErrNotFound, ErrAlreadyExists or ErrConflict and change nothing.
func (s *Store) Apply(ctx context.Context, cmds ...Command) (int64, []runtime.Object, error) {
	panic("unimplemented")
}

// Get returns the current item for key, or an error wrapping ErrNotFound.
func (s *Store) Get(key Key) (*Item, error) { panic("unimplemented") }

// Snapshot returns the current state of one resource.
func (s *Store) Snapshot(resource string) *Snapshot { panic("unimplemented") }

// SnapshotAt returns the state of one resource at an earlier revision, if still
// retained (for list continuation); otherwise an error wrapping ErrCompacted.
func (s *Store) SnapshotAt(resource string, rev int64) (*Snapshot, error) { panic("unimplemented") }

// Revision of the snapshot.
func (sn *Snapshot) Revision() int64 { panic("unimplemented") }

// Len is the number of items in the snapshot.
func (sn *Snapshot) Len() int { panic("unimplemented") }

// Ascend calls fn for each item in (namespace, name) order, restricted to namespace
// when it is not empty, starting after the "namespace/name" position after (exclusive;
// empty means from the start), until fn returns false.
func (sn *Snapshot) Ascend(namespace, after string, fn func(*Item) bool) { panic("unimplemented") }

// Watcher delivers the events of one resource after a revision.
type Watcher struct{}

// Watch returns a watcher for events of resource (in namespace, or all when empty)
// with revision greater than from. It fails with ErrCompacted when from is older
// than the change log keeps.
func (s *Store) Watch(ctx context.Context, resource, namespace string, from int64) (*Watcher, error) {
	panic("unimplemented")
}

// Next blocks until at least one event is available and returns all that are, in
// revision order. It returns ctx.Err() when ctx ends, and ErrCompacted when the
// watcher fell behind the change log window.
func (w *Watcher) Next(ctx context.Context) ([]Event, error) { panic("unimplemented") }
