package control

import (
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Ref names a stored object: its plural resource, namespace and name.
type Ref struct {
	Resource, Namespace, Name string
}

// Controller is the kind-specific part of an object's actor. One value per object is
// created when its actor is first spawned and kept across the actor's restarts, so
// what a controller keeps in its fields (an RC's expectations) survives a panic.
// Every method runs on the actor's goroutine, one at a time.
type Controller interface {
	// Settle runs after every message while the object exists: it notices what
	// changed and queues a sync or a timer.
	Settle(fx Effects)
	// Sync compares what the object asks for with what exists and sends the writes
	// that close the gap. It runs when a sync was queued (QueueSync, QueueResync,
	// SyncAt), at most once per burst of messages, and only while the object exists.
	Sync(fx Effects)
	// Answered sees each answer to a write this controller asked of another object.
	Answered(fx Effects, a Answer)
	// Deleted runs once the object was removed, with its last state.
	Deleted(fx Effects, last runtime.Object)
}

// Base is the controller of kinds that do nothing of their own; controllers embed it
// for the methods they do not need.
type Base struct{}

// Settle does nothing.
func (Base) Settle(Effects) {}

// Sync does nothing.
func (Base) Sync(Effects) {}

// Answered does nothing.
func (Base) Answered(Effects, Answer) {}

// Deleted does nothing.
func (Base) Deleted(Effects, runtime.Object) {}

var _ Controller = Base{}

// Deleter is implemented by controllers whose objects are not simply removed by a
// delete request.
type Deleter interface {
	// Deletion returns the grace period in seconds of a delete of obj (requested:
	// the client's gracePeriodSeconds, or nil) and whether the object is held:
	// marked with a deletionTimestamp until its finalizers or its controller let it
	// go, rather than removed at once. propagation is the request's policy
	// (Orphan, Background, Foreground, or "" for the kind's default).
	Deletion(obj runtime.Object, requested *int64, propagation string) (grace int64, hold bool)
	// Terminate adjusts the copy of the object being marked for deletion.
	Terminate(obj runtime.Object, propagation string)
}

// Holder is implemented by controllers that hold every deleted object until they
// remove it themselves (Effects.Remove): a namespace waits for its contents. Such a
// controller owns the object's timers; no grace period expires it.
type Holder interface {
	HoldsDeleted() bool
}

// Deferrer is implemented by controllers that may put off a resync from a feed: when
// ResyncLater returns true, the controller's own progress is about to queue a sync
// that will see the change, and it notes that one is owed.
type Deferrer interface {
	ResyncLater(fx Effects) bool
}

// Receiver is implemented by controllers that take messages of their own kind (an
// event's occurrences, a quota's charges); msg is the message's payload. It runs
// even while the object does not exist yet. When the message was a request (sent
// with a sender waiting), its answer and error are the reply; a message nobody waits
// for (an event's occurrence) drops them, so such receivers return nil, nil.
// Receive must never wait on another object's actor: requesters may be blocked on it.
type Receiver interface {
	Receive(fx Effects, msg any) (answer any, err error)
}

// Answer is the answer to a write a controller asked for.
type Answer struct {
	Ref    Ref
	Object runtime.Object // the stored state (shared: never mutate), or the last one when Gone
	Gone   bool
	Err    error
}

// Effects is what a controller may do and read. Writes to other objects go to their
// own actors; their answers come back through Controller.Answered.
type Effects interface {
	// Self is the object's name.
	Self() Ref
	// Object is the object as stored (shared: never mutate), nil when absent.
	Object() runtime.Object
	// Revision is the store revision of Object.
	Revision() int64
	// Now is the system's clock.
	Now() time.Time
	// Trace is the trace id of the request that caused the current work.
	Trace() string
	// Log returns a logger with the object's fields and the trace of the request
	// that caused the current work.
	Log() logrus.FieldLogger
	// Outstanding counts the writes asked of other objects and not answered yet.
	Outstanding() int

	// Create asks for obj, a new object of resource, to be created. It is first given
	// what a created object gets (uid, creationTimestamp, defaults) and validated; a
	// refusal is returned and nothing is sent.
	Create(resource string, obj runtime.Object) error
	// Update asks for cur, as last read, to become next; cur's uid and
	// resourceVersion are the preconditions. next is prepared and validated as the
	// API prepares and validates an update; a refusal is returned and nothing is sent.
	Update(resource string, cur, next runtime.Object) error
	// Delete asks for an object to be deleted with its kind's default grace. With
	// noAnswer, its answer does not come back (Outstanding does not count it).
	Delete(ref Ref, noAnswer bool)
	// Write persists next as the object's own new state (its status, its
	// finalizers: the controller is the object's writer, so no update preparation
	// applies) and returns once it is durable; when the object is absent, next is
	// created (prepared and validated as any created object). Both are admitted.
	Write(next runtime.Object) error
	// Remove deletes the object itself at once (a Holder's last step).
	Remove() error

	// QueueSync makes the controller sync once the messages already waiting are
	// handled: its own progress (its object changed, its writes were answered).
	QueueSync()
	// QueueResync is QueueSync for a change of the controller's inputs: it is paced
	// by the cost of the last sync.
	QueueResync()
	// SyncAt makes the controller sync at t, replacing any earlier SyncAt.
	SyncAt(t time.Time)
	// Pace holds the next resync back in proportion to cost (a write's cost).
	Pace(cost time.Duration)

	// Record records an event about involved, from the kind's controller.
	Record(involved runtime.Object, eventType, reason, message string)
	// Note puts a number about the current work (why a sync decided what it did) on
	// its trace span, when it is traced; explain reads it back.
	Note(key string, value int)
	// Serves tells whether the system has actors for resource (a test system may
	// run only some kinds).
	Serves(resource string) bool
	// Each calls fn with each stored object of resource in namespace ("" for all),
	// in name order, until fn returns false. The objects are shared: never mutate.
	Each(resource, namespace string, fn func(obj runtime.Object) bool)
	// Related calls fn, in name order, with each stored object of resource in
	// namespace that a controller with uid may own or whose name it may take: those
	// with an owner reference to uid (controller or not), those with no controller,
	// and those whose name begins with prefix (none when it is empty), until fn
	// returns false. They are read at one moment, from an index: a controller reads
	// its own objects without reading its whole namespace. Shared: never mutate.
	Related(resource, namespace string, uid types.UID, prefix string, fn func(obj runtime.Object) bool)
	// Changed is a store revision after which no object of resource has changed: a
	// controller that noted it before reading the resource with Each knows, while it
	// stays the same, that what it read is still what is stored.
	Changed(resource string) int64
	// Get returns the stored object named ref, or nil.
	Get(ref Ref) runtime.Object
	// Contents lists every stored namespaced object of namespace ns. ok is false
	// when the list may miss a write committed before the call (a master replica
	// that is not the leader could not catch up with it now): then it proves nothing
	// about what is left.
	Contents(ns string) (refs []Ref, ok bool)
	// Tell sends msg to one of the system's singleton actors, by name.
	Tell(name string, msg any)
}
