package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
	"github.com/kubeactor/kubeactor/actors/event"
	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/persistence"
)

// cell is what an object's actor keeps across restarts: an actor instance is
// replaced on restart, the cell is not. Only that actor touches it.
type cell struct {
	key      persistence.Key
	initial  *persistence.Item // state at first start (loaded at Start)
	absent   bool              // spawned for a create: known not to exist at first start
	started  bool              // a first start happened: later starts reload from the store
	handled  uint64            // routed requests handled (see the protocol in manager.go)
	restarts int
	trace    string            // trace of the last request, for logs and writes the actor makes on its own
	span     trace.SpanContext // span of the last message handled (tracing.go): the parent of its writes
	// objKey is the tracing.ObjectKey value of key, and spanOp and spanName the
	// operation and name of the last request span, made once (tracing.go).
	objKey           string
	spanOp, spanName string
	timer            Timer // the grace period's end (Options.Clock)
	requeue          Timer // a controller's next sync without an event (Options.Clock)
	// overdue fires when answers awaited from another member's actors have not come
	// for a request timeout (cluster.go: a message to a member that went away can be
	// lost without a dead letter); answered counts the answers, to tell.
	overdue  Timer
	answered uint64
	paced    *time.Timer // a sync held back by pacing, on the real clock (see queueResync)
	// syncAfter is the earliest start of the next paced sync.
	syncAfter time.Time
	// ctrl is the kind's controller, with the state it keeps across restarts.
	ctrl control.Controller
	// recorder combines the similar events this actor records (events.go).
	recorder *event.Aggregator
	// stats are the counters of the kind's actors (stats.go).
	stats *kindStats
}

// objectActor is the only writer of one object. Its Receive checks each request
// against its state with the lifecycle decisions, persists the plan, updates its
// state and only then answers; what the object's kind does of its own is its
// controller's (control.Controller), which acts through the actor's effects.
type objectActor struct {
	env  *env
	cell *cell
	ctx  actor.Context  // the message being handled
	obj  runtime.Object // last stored state (shared with the store: never mutated); nil when absent
	rev  int64

	outstanding int  // writes asked of other actors, not yet answered
	syncQueued  bool // a syncNow is in the mailbox

	span             trace.Span // the message's span, when traced (tracing.go)
	creates, deletes int        // requests a sync made (the sync's span)
	// syncFrom is the parent of the span of the sync being handled, until the sync
	// acts and its span starts (syncSpan, at syncStart); invalid otherwise.
	syncFrom  trace.SpanContext
	syncStart time.Time

	timing *persistence.ApplyTiming // asked of the store for a traced apply (tracing.go)
}

// Receive is a type switch: decide, persist, then answer.
func (a *objectActor) Receive(ctx actor.Context) {
	defer a.cell.stats.handled(time.Now())
	if a.env.tracer != nil {
		defer a.endSpan()
	}
	a.ctx = ctx
	if a.dryRun(ctx) { // admit.go
		return
	}
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		first := !a.cell.started
		a.load()
		if !(first && a.cell.absent) {
			a.report(ctx)
			a.settle(ctx)
		}
	case *idleCheck:
		a.idle(ctx)
	case *actor.Restarting:
		a.cell.restarts++
		a.cell.stats.restarted()
		a.fields(a.cell.trace).Warn("object actor restarting")
	case *actor.Stopping:
		a.stopTimer()
		if a.cell.requeue != nil {
			a.cell.requeue.Stop()
			a.cell.requeue = nil // a later incarnation arms its own (syncAt)
		}
		if a.cell.overdue != nil {
			a.cell.overdue.Stop()
		}
		if a.cell.paced != nil {
			a.cell.paced.Stop()
		}
	case *createRequest:
		a.begin(msg.trace)
		a.traceMsg("create", &msg.envelope)
		plan, err := a.admitCreate(msg)
		if err == nil {
			err = a.apply(msg.trace, plan)
		}
		if msg.again(err) {
			msg.object = msg.asked
			ctx.Forward(ctx.Parent()) // allocated again by the manager, answered then
		} else {
			a.answer(ctx, a.obj, false, err)
		}
		a.report(ctx)
		a.settle(ctx)
	case *updateRequest:
		a.begin(msg.trace)
		a.traceMsg(updateOp(msg.sub), &msg.envelope)
		plan, err := a.admitUpdate(msg)
		if err == nil {
			err = a.apply(msg.trace, plan)
		}
		if msg.again(err) {
			msg.object = msg.asked
			ctx.Forward(ctx.Parent())
		} else if plan.Gone {
			a.answer(ctx, msg.object, false, err)
		} else {
			a.answer(ctx, a.obj, false, err)
		}
		a.report(ctx)
		a.settle(ctx)
	case *deleteRequest:
		a.begin(msg.trace)
		a.traceMsg("delete", &msg.envelope)
		last := a.obj
		plan, err := a.admitDelete(msg)
		if err == nil {
			err = a.apply(msg.trace, plan)
		}
		if plan.Gone {
			a.answer(ctx, last, true, err)
			if err == nil {
				a.cell.ctrl.Deleted(a.effects(), last)
			}
		} else {
			a.answer(ctx, a.obj, false, err)
		}
		a.report(ctx)
		a.settle(ctx)
	case *graceTick:
		if err := a.apply(a.cell.trace, lifecycle.Expire(a.obj, a.holds(), a.env.now())); err != nil {
			a.fields(a.cell.trace).WithField("error", err).Error("delete after grace period")
		}
		a.settle(ctx)
	case *reply: // an answer to a write this actor asked another actor for
		a.cell.answered++
		a.outstanding = max(a.outstanding-1, 0)
		a.cell.ctrl.Answered(a.effects(), control.Answer{
			Ref:    control.Ref{Resource: msg.key.Resource, Namespace: msg.key.Namespace, Name: msg.key.Name},
			Object: msg.object, Gone: msg.gone, Err: msg.err,
		})
		if a.outstanding == 0 {
			a.settle(ctx)
		}
	case *actor.DeadLetterResponse: // a write asked of an actor that is gone (another member left)
		a.lost(ctx, 1)
	case *membersChanged: // answers to writes asked of another member may never come
		a.lost(ctx, a.outstanding)
	case *answersOverdue:
		switch {
		case a.outstanding == 0:
		case a.cell.answered == msg.answered: // nothing came for a whole timeout
			a.lost(ctx, a.outstanding)
		default:
			a.armOverdue(ctx)
		}
	case *resyncRequest:
		a.begin(msg.trace)
		a.catchUp()
		if d, ok := a.cell.ctrl.(control.Deferrer); !ok || !d.ResyncLater(a.effects()) {
			a.queueResync(ctx)
		}
	case *syncNow:
		a.syncQueued, a.cell.paced = false, nil
		if a.obj != nil {
			start := time.Now() // the cost of the sync on the real clock, for pacing
			a.traceSync()
			a.cell.ctrl.Sync(a.effects())
			a.paceFor(time.Since(start))
		}
		a.settle(ctx)
	case *kindRequest:
		a.begin(msg.trace)
		var ans kindReply
		if r, ok := a.cell.ctrl.(control.Receiver); ok {
			ans.answer, ans.err = r.Receive(a.effects(), msg.payload)
		}
		if ctx.Sender() != nil { // a request: someone waits for the answer
			ctx.Respond(&ans)
		}
		a.settle(ctx)
	default:
		a.testHook(ctx, msg)
	}
}

// lost gives up on n of the answers awaited (their writes may or may not have
// happened): the controller sees each as an answer without an object name and an
// error, and syncs again from what the store holds.
func (a *objectActor) lost(ctx actor.Context, n int) {
	for range min(n, a.outstanding) {
		a.outstanding--
		a.cell.ctrl.Answered(a.effects(), control.Answer{Err: errUnavailable})
	}
	if a.outstanding == 0 {
		a.settle(ctx)
	}
}

// catchUp adopts a newer stored state of the object, in a cluster only: an actor
// activated on a new owner loads from that replica's store, which may not yet hold
// the previous owner's last write (one writer per object otherwise means the store
// never holds a newer state than the actor's own).
func (a *objectActor) catchUp() {
	if a.env.cluster == nil || a.obj == nil {
		return
	}
	if it, err := a.env.store.Get(a.cell.key); err == nil && it.Revision > a.rev {
		a.obj, a.rev = it.Object(), it.Revision
	}
}

// answersOverdue is armOverdue's timer: answered is the count of answers when it
// was armed.
type answersOverdue struct{ answered uint64 }

// armOverdue makes the actor look, a request timeout from now, whether any answer
// came meanwhile; in a cluster only (in one system no message is lost).
func (a *objectActor) armOverdue(ctx actor.Context) {
	if a.env.cluster == nil {
		return
	}
	if a.cell.overdue != nil {
		a.cell.overdue.Stop()
	}
	self, root, mark := ctx.Self(), a.env.root, a.cell.answered
	a.cell.overdue = a.env.clock.AfterFunc(a.env.requestTimeout, func() { root.Send(self, &answersOverdue{answered: mark}) })
}

// report tells the manager what the object is after the requests handled so far, for
// the kinds whose manager keeps what their objects hold (reportsStored).
func (a *objectActor) report(ctx actor.Context) {
	if a.obj == nil || !reportsStored(a.cell.key.Resource) {
		return // an absent object reports childIdle in settle
	}
	ctx.Send(ctx.Parent(), &stored{key: objKey{a.cell.key.Namespace, a.cell.key.Name}, pid: ctx.Self(), handled: a.cell.handled, obj: a.obj})
}

// holds tells whether the kind's controller holds every deleted object (and owns its
// timers).
func (a *objectActor) holds() bool {
	h, ok := a.cell.ctrl.(control.Holder)
	return ok && h.HoldsDeleted()
}

// queueSync makes the actor sync once the messages already in its mailbox are
// handled: a burst of requests costs one sync. It is for the actor's own progress
// (its object changed, its writes were answered) and never waits for pacing.
func (a *objectActor) queueSync(ctx actor.Context) {
	if a.syncQueued && a.cell.paced == nil {
		return
	}
	if a.cell.paced != nil { // a paced resync is waiting: sync now instead
		a.cell.paced.Stop()
		a.cell.paced = nil
	}
	a.syncQueued = true
	ctx.Send(ctx.Self(), &syncNow{})
}

// queueResync is queueSync for a resync from a feed: the controller's inputs changed.
// Resyncs are paced by the sync's own cost: after a sync that took d (1 ms or more),
// the next resync starts no sooner than Options.SyncPacing×d later, so a controller
// that reads many objects (an RC or a service over 30,000 pods) spends at most 1/(SyncPacing+1)
// of a core however fast those objects change, and that one sync sees every change.
func (a *objectActor) queueResync(ctx actor.Context) {
	if a.syncQueued {
		return
	}
	a.syncQueued = true
	if wait := time.Until(a.cell.syncAfter); wait > 0 {
		self, root := ctx.Self(), a.env.root
		a.cell.paced = time.AfterFunc(wait, func() { root.Send(self, &syncNow{}) })
		return
	}
	ctx.Send(ctx.Self(), &syncNow{})
}

// paceFor holds the next feed-triggered sync back in proportion to cost, the time
// the controller's last sync (or a write it waited for) took; see queueResync.
func (a *objectActor) paceFor(cost time.Duration) {
	if cost < minPacedSync || a.env.syncPacing <= 0 {
		return
	}
	if next := time.Now().Add(time.Duration(a.env.syncPacing) * cost); next.After(a.cell.syncAfter) {
		a.cell.syncAfter = next
	}
}

// minPacedSync: syncs cheaper than this are not paced (see queueResync).
const minPacedSync = time.Millisecond

// begin counts a routed request (see the protocol in manager.go) and notes its trace.
func (a *objectActor) begin(trace string) {
	a.cell.handled++
	a.cell.trace = trace
}

func (a *objectActor) decideDelete(opts DeleteOptions) (lifecycle.Plan, error) {
	var grace int64
	hold := a.holds()
	del, isDeleter := a.cell.ctrl.(control.Deleter)
	if a.obj != nil && isDeleter {
		var h bool
		grace, h = del.Deletion(a.obj, opts.GracePeriodSeconds, opts.PropagationPolicy)
		hold = hold || h
	}
	d := lifecycle.Deletion{
		Grace: grace,
		Hold:  hold,
		Pre:   opts.Preconditions,
	}
	plan, err := lifecycle.Delete(a.obj, a.rev, d, a.env.now())
	if err == nil && plan.Op == persistence.OpUpdate && isDeleter {
		del.Terminate(plan.Object, opts.PropagationPolicy)
	}
	return plan, err
}

// load sets the state: at first start from what the manager knew, later (after a
// restart) from the store.
func (a *objectActor) load() {
	c := a.cell
	switch {
	case !c.started && c.initial != nil:
		a.obj, a.rev = c.initial.Object(), c.initial.Revision
		c.initial = nil
	case !c.started && c.absent:
		a.obj, a.rev = nil, 0
	default:
		a.reload()
	}
	c.started = true
}

// reload reads the stored state. A store that cannot answer is a failure for the
// supervisor to handle: the actor must not serve from a state it does not know.
func (a *objectActor) reload() {
	it, err := a.env.store.Get(a.cell.key)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		a.obj, a.rev = nil, 0
	case err != nil:
		panic(fmt.Errorf("reload %s %s/%s: %w", a.cell.key.Resource, a.cell.key.Namespace, a.cell.key.Name, err))
	default:
		a.obj, a.rev = it.Object(), it.Revision
	}
}

// apply persists plan (returning when it is durable) and then updates the state.
// The command carries the revision the actor last saw, so a stale view (which one
// writer per object should never have) fails with a conflict instead of overwriting.
func (a *objectActor) apply(trace string, plan lifecycle.Plan) error {
	if plan.Op == 0 {
		return nil
	}
	cmd := persistence.Command{Op: plan.Op, Key: a.cell.key, Object: plan.Object}
	if plan.Op != persistence.OpCreate {
		cmd.Pre.ResourceVersion = a.rev
	}
	sp := a.traceApply(plan.Op)
	ctx := context.Background()
	if a.env.cluster != nil && !a.env.leads() {
		// A follower's write goes to the leader (persistence forwards it): bounded,
		// so an actor never waits forever on a leader that died with it in flight.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.env.requestTimeout)
		defer cancel()
	}
	rev, objs, err := a.env.store.Apply(a.timed(ctx, sp), cmd)
	a.applied(sp, plan.Op, rev, err)
	if err != nil {
		if errors.Is(err, persistence.ErrNotFound) || errors.Is(err, persistence.ErrAlreadyExists) ||
			errors.Is(err, persistence.ErrConflict) {
			a.reload()
		}
		return err
	}
	a.rev = rev
	if plan.Op == persistence.OpDelete {
		a.obj = nil
	} else {
		a.obj = objs[0]
	}
	if a.env.debug {
		a.fields(trace).WithFields(logrus.Fields{"op": opName(plan.Op), "revision": rev}).Debug("persisted")
	}
	return nil
}

func (a *objectActor) answer(ctx actor.Context, obj runtime.Object, gone bool, err error) {
	if err != nil {
		k := a.cell.key
		ctx.Respond(&reply{key: k, err: fmt.Errorf("%s %s/%s: %w", k.Resource, k.Namespace, k.Name, err)})
		return
	}
	ctx.Respond(&reply{key: a.cell.key, object: obj, gone: gone})
}

// settle runs after every message: the kind's own work, the grace timer, and the
// idle report when the object is gone.
func (a *objectActor) settle(ctx actor.Context) {
	if a.obj != nil {
		a.cell.ctrl.Settle(a.effects())
	}
	if a.obj == nil {
		a.stopTimer()
		ctx.Send(ctx.Parent(), &childIdle{
			key:     objKey{a.cell.key.Namespace, a.cell.key.Name},
			pid:     ctx.Self(),
			handled: a.cell.handled,
		})
		return
	}
	if a.holds() {
		return // the kind's controller owns the object's end
	}
	if deadline, ok := lifecycle.Deadline(a.obj); ok {
		a.schedule(ctx, max(deadline.Sub(a.env.now()), 0), &graceTick{})
	} else {
		a.stopTimer()
	}
}

// idle answers the manager's idleCheck: an actor whose object needs none of its own
// (needsActor) reports childIdle, as one without an object does, when nothing is
// going on in it: no sync queued, no answer awaited, no timer armed. The manager
// then stops it unless a request was routed to it meanwhile.
func (a *objectActor) idle(ctx actor.Context) {
	if a.obj == nil || needsActor(a.obj) || a.syncQueued || a.outstanding > 0 ||
		a.cell.timer != nil || a.cell.requeue != nil || a.cell.overdue != nil || a.cell.paced != nil {
		return
	}
	ctx.Send(ctx.Parent(), &childIdle{
		key:     objKey{a.cell.key.Namespace, a.cell.key.Name},
		pid:     ctx.Self(),
		handled: a.cell.handled,
	})
}

// schedule sends msg to the actor itself after d, replacing any pending timer.
func (a *objectActor) schedule(ctx actor.Context, d time.Duration, msg interface{}) {
	a.stopTimer()
	self, root := ctx.Self(), a.env.root
	a.cell.timer = a.env.clock.AfterFunc(d, func() { root.Send(self, msg) })
}

// syncAt makes the actor sync again at t (a controller's requeue), replacing any
// earlier requeue. A timer that can be reset (the real clock's) is reset, not
// replaced: a node's controller moves its requeue on every heartbeat.
func (a *objectActor) syncAt(ctx actor.Context, t time.Time) {
	d := max(t.Sub(a.env.now()), 0)
	if r, ok := a.cell.requeue.(resetter); ok {
		r.Reset(d) // it sends to this actor, as when it was armed
		return
	}
	if a.cell.requeue != nil {
		a.cell.requeue.Stop()
	}
	self, root := ctx.Self(), a.env.root
	a.cell.requeue = a.env.clock.AfterFunc(d, func() { root.Send(self, &syncNow{}) })
}

// resetter is a Timer that can be armed again (*time.Timer).
type resetter interface{ Reset(d time.Duration) bool }

func (a *objectActor) stopTimer() {
	if a.cell.timer != nil {
		a.cell.timer.Stop()
		a.cell.timer = nil
	}
}

func (a *objectActor) fields(trace string) logrus.FieldLogger {
	return a.env.log.WithFields(logrus.Fields{
		"trace": trace, "kind": a.cell.key.Resource, "namespace": a.cell.key.Namespace, "name": a.cell.key.Name,
	})
}

func opName(op persistence.Op) string {
	switch op {
	case persistence.OpCreate:
		return "create"
	case persistence.OpUpdate:
		return "update"
	case persistence.OpDelete:
		return "delete"
	}
	return "unknown"
}
