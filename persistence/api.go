package persistence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/persistence/command"
)

// Key identifies one stored object.
type Key struct {
	Resource  string // plural lower-case resource name, e.g. "pods"
	Namespace string // empty for cluster-scoped resources
	Name      string
}

// Op is the kind of change a Command makes: package command's, named here too so that
// the store's callers need one import (as package os names io/fs's FileMode).
type Op = command.Op

// The three operations of the apply path.
const (
	OpCreate = command.OpCreate
	OpUpdate = command.OpUpdate
	OpDelete = command.OpDelete
)

// Command is one change in a transaction. Commands are plain values so that a later
// replication layer can ship them through a Raft log and apply them deterministically.
type Command struct {
	Op  Op
	Key Key
	// Object is the new state for OpCreate and OpUpdate; the store takes ownership
	// and sets metadata.resourceVersion to the transaction's revision.
	Object runtime.Object
	// Pre must hold for the stored object (OpUpdate and OpDelete).
	Pre command.Preconditions
}

// EventType is the kind of change a watch event reports.
type EventType string

// Event types, spelled as on the Kubernetes watch wire.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Sentinel errors; wrapped errors carry the key. The first three are package
// command's (the same values), which the pure decision packages return.
var (
	ErrNotFound      = command.ErrNotFound
	ErrAlreadyExists = command.ErrAlreadyExists
	ErrConflict      = command.ErrConflict
	ErrCompacted     = errors.New("persistence: revision compacted")
	ErrClosed        = errors.New("persistence: store closed")
	// ErrInvalid reports a malformed command (bad key, missing object, name mismatch).
	ErrInvalid = errors.New("persistence: invalid command")
)

// Item is one stored object at one revision. Its object is shared and must never be
// mutated: DeepCopyObject it first.
//
// An item made by the store keeps its stored JSON and may be lean: its decoded object
// dropped (the store's sweep does it to current objects no one read for a while, and
// the change log to old versions), to be decoded again from the JSON when it is next
// read. A decoded pod is about twice its JSON and full of pointers the collector must
// follow; the JSON is one byte slice it need not look into.
type Item struct {
	Key      Key
	Revision int64

	obj     atomic.Pointer[decoded] // nil while lean
	recent  atomic.Bool             // Object was called since the last sweep (Store.sweepDecoded)
	visited atomic.Uint32           // the number of the last sweep that looked at it
	// newObject is the store's Options.NewObject, with which a lean item is decoded
	// again; nil for an item made outside the store (NewItem), which is never lean.
	newObject func(string) (runtime.Object, error)
	transient bool // an old version in the change log: decoded on demand, never kept decoded again

	uid  types.UID
	once sync.Once
	json []byte // the stored encoding; set by the store, or lazily by JSON
}

// decoded holds an item's object, so that it can be swapped atomically.
type decoded struct{ obj runtime.Object }

// NewItem returns an item of obj made outside the store (a computed list's rows).
func NewItem(key Key, rev int64, obj runtime.Object) *Item {
	it := &Item{Key: key, Revision: rev}
	it.setObject(obj)
	return it
}

func (it *Item) setObject(obj runtime.Object) {
	if obj != nil {
		it.obj.Store(&decoded{obj})
	}
}

// Object returns the item's object, decoding it from the stored JSON when the item
// is lean (and keeping it decoded, unless the item is an old version). It is nil only
// for an item made outside the store without one.
func (it *Item) Object() runtime.Object {
	if d := it.obj.Load(); d != nil {
		if !it.recent.Load() {
			it.recent.Store(true)
		}
		return d.obj
	}
	obj := it.Peek()
	if obj == nil || it.transient {
		return obj
	}
	it.recent.Store(true)
	if it.obj.CompareAndSwap(nil, &decoded{obj}) {
		return obj
	}
	if d := it.obj.Load(); d != nil {
		return d.obj // another reader decoded it first: share theirs
	}
	return obj
}

// Peek returns the item's object as Object does, but leaves a lean item lean and
// does not count as a read: for a reader that visits many items once (a list's rows,
// a collector's scan) and for the store's own bookkeeping of an item it is about to
// replace (owners, claims, a tombstone), so that they do not make every object
// decoded again. Like Object's, the object is shared and must not be mutated.
func (it *Item) Peek() runtime.Object {
	if d := it.obj.Load(); d != nil {
		return d.obj
	}
	if it.json == nil || it.newObject == nil {
		return nil
	}
	obj, _, err := decodeObject(it.Key, it.json, it.newObject)
	if err != nil {
		// The same bytes were decoded, or encoded from the object, when the item was
		// loaded or written: they cannot fail now but in a corrupted process.
		panic(fmt.Sprintf("persistence: a lean item no longer decodes: %v", err))
	}
	return obj
}

// lean reports whether the item holds its JSON alone (Object decodes it).
func (it *Item) lean() bool { return it.obj.Load() == nil }

// JSON returns the object's JSON encoding (with resourceVersion), computed once.
// For items made by the store it is the stored bytes themselves, so it costs nothing.
// The returned slice is shared and must not be modified.
func (it *Item) JSON() []byte {
	it.once.Do(func() {
		if d := it.obj.Load(); it.json == nil && d != nil {
			it.json, _ = marshalJSON(d.obj)
		}
	})
	return it.json
}

// Event is one change, in revision order. For Deleted, Item is the last state with
// Revision (and resourceVersion) set to the deletion's revision.
type Event struct {
	Type EventType
	Item *Item
}

// Compile-time reminder of the contract used by the rest of the system.
var _ interface {
	Apply(ctx context.Context, cmds ...Command) (int64, []runtime.Object, error)
	Get(key Key) (*Item, error)
	Snapshot(resource string) *Snapshot
	SnapshotAt(resource string, rev int64) (*Snapshot, error)
	Watch(ctx context.Context, resource, namespace string, from int64) (*Watcher, error)
	Follow(ctx context.Context, resource string, from int64, snapshot func(*Snapshot, bool), events func([]Event)) error
	Revision() int64
	Close() error
} = (*Store)(nil)
