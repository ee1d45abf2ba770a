package persistence

import (
	"context"
	"errors"
	"sync"

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

// Item is one stored object at one revision. Object is shared and must never be
// mutated: DeepCopyObject it first.
type Item struct {
	Key      Key
	Revision int64
	Object   runtime.Object

	uid  types.UID
	once sync.Once
	json []byte // the stored encoding; set by the store, or lazily by JSON
}

// JSON returns the object's JSON encoding (with resourceVersion), computed once.
// For items made by the store it is the stored bytes themselves, so it costs nothing.
// The returned slice is shared and must not be modified.
func (it *Item) JSON() []byte {
	it.once.Do(func() {
		if it.json == nil && it.Object != nil {
			it.json, _ = marshalJSON(it.Object)
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
