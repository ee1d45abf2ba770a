package actors

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// Requests for one object. The kind's manager routes them to the object's actor,
// which answers the original sender with a *reply. Each carries the trace id of the
// request that caused it.

// routed is a request the manager forwards to the actor of target().
type routed interface {
	target() persistence.Key
	hop() int
}

// envelope is the part every routed request shares.
type envelope struct {
	trace string
	key   persistence.Key
	span  trace.SpanContext // the sender's span (tracing.go); invalid when untraced
	sent  time.Time         // when it was sent, when traced (the mailbox wait)
	// hops counts the members a request was forwarded through (cluster.go): while
	// the members' views of the placement differ, a request is not passed on forever.
	hops int
}

func (e envelope) target() persistence.Key { return e.key }

// hop counts one more forward of the request to another member and returns the count.
func (e *envelope) hop() int {
	e.hops++
	return e.hops
}

type createRequest struct {
	envelope
	write  // admit.go
	object runtime.Object
	allocation
}

type updateRequest struct {
	envelope
	write
	object runtime.Object
	pre    command.Preconditions
	allocation
}

// allocation is what a manager's allocator (managerext.go) did to a write: the
// object as asked, before the allocator filled values in, and how often it did. A
// write whose values another member's object took meanwhile (the store answers
// ErrClaimed) goes back to the manager with the object as asked, to be given other
// values, at most maxAllocations times.
type allocation struct {
	asked  runtime.Object // nil: the allocator changed nothing
	allocs int
}

// maxAllocations bounds the allocations of one write.
const maxAllocations = 8

// filled records that the allocator replaced the request's object asked.
func (a *allocation) filled(asked runtime.Object) {
	if a.asked == nil {
		a.asked = asked
	}
	a.allocs++
}

// again tells whether a write that failed with err goes back to be allocated again.
func (a *allocation) again(err error) bool {
	return a.asked != nil && a.allocs < maxAllocations && errors.Is(err, persistence.ErrClaimed)
}

type deleteRequest struct {
	envelope
	write
	opts DeleteOptions
}

// panicRequest makes the object's actor answer, then panic (a test hook).
type panicRequest struct{ envelope }

// probeRequest asks the object's actor for its bookkeeping (tests).
type probeRequest struct{ envelope }

// childrenRequest asks a manager for the keys of the objects that have an actor
// (tests); a childrenReply answers it.
type childrenRequest struct{}

type childrenReply struct{ keys []objKey }

// resyncRequest asks an object's actor to look again at what it controls (level
// based: it carries no delta). Feeds send it when a related object changed; nobody
// waits for an answer, and the manager drops it for an object without an actor.
type resyncRequest struct{ envelope }

// syncNow is what an actor sends itself after a resync: resyncs that pile up in the
// mailbox before it is handled cost one sync, not one each.
type syncNow struct{}

// reply answers every routed request.
type reply struct {
	key    persistence.Key // the object the request was for
	object runtime.Object  // stored, shared: never mutate
	gone   bool
	err    error
}

// probeReply answers a probeRequest.
type probeReply struct {
	self     *objectActor // for tests of what the actor keeps alive
	pid      *actor.PID
	revision int64
	handled  uint64
	restarts int
}

// childIdle tells the manager that an object's actor holds no object after handling
// `handled` routed requests; see the protocol in manager.go.
type childIdle struct {
	key     objKey
	pid     *actor.PID
	handled uint64
}

// idleSweep is a manager's timer: time to look for idle children (manager.go).
type idleSweep struct{}

// idleCheck asks an object's actor of an on-demand kind, routed nothing since the
// manager's last sweep, to report childIdle if it needs no actor (object.go idle).
type idleCheck struct{}

// graceTick asks an object's actor to look again at its grace period.
type graceTick struct{}

// kindRequest carries a message of the object's kind to its controller
// (control.Receiver): an event's occurrence (sent: nobody waits), a quota's charge
// (requested: answered with a *kindReply).
type kindRequest struct {
	envelope
	payload any
}

// kindReply answers a kindRequest that was sent as a request: the controller's
// answer and error, as its Receive returned them.
type kindReply struct {
	answer any
	err    error
}

// stored is an object actor's report to its manager, for kinds whose manager keeps
// what the objects hold (reportsStored): after handling `handled` routed requests,
// the object as stored is obj (nil when absent).
type stored struct {
	key     objKey
	pid     *actor.PID
	handled uint64
	obj     runtime.Object
}

// ping is answered with pong once the receiver has started (and loaded).
type ping struct{}

type pong struct{}
