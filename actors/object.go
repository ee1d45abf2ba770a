package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/event"
	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/persistence"
)

// maxTick bounds how long an object waits before looking at its grace period again,
// so that a clock that jumps (Options.Now in tests, NTP) is noticed within it.
const maxTick = time.Second

// cell is what an object's actor keeps across restarts: an actor instance is
// replaced on restart, the cell is not. Only that actor touches it.
type cell struct {
	key      persistence.Key
	initial  *persistence.Item // state at first start (loaded at Start)
	absent   bool              // spawned for a create: known not to exist at first start
	started  bool              // a first start happened: later starts reload from the store
	handled  uint64            // routed requests handled (see the protocol in manager.go)
	restarts int
	trace    string // trace of the last request, for logs and writes the actor makes on its own
	timer    *time.Timer
	requeue  *time.Timer // a controller's next sync without an event
	paced    *time.Timer // a sync held back by pacing (see queueSync)
	// syncAfter is the earliest start of the next paced sync.
	syncAfter time.Time
	ctrl      any // a controller's own state (an RC's expectations)
	// recorder combines the similar events this actor records (events.go).
	recorder *event.Aggregator
}

// objectActor is the only writer of one object. Its Receive checks each request
// against its state with the lifecycle decisions, persists the plan, updates its
// state and only then answers.
type objectActor struct {
	env  *env
	hook *hook
	cell *cell
	obj  runtime.Object // last stored state (shared with the store: never mutated); nil when absent
	rev  int64

	outstanding int  // writes asked of other actors, not yet answered
	syncQueued  bool // a syncNow is in the mailbox
	// namespace termination
	swept bool // deletes were sent since the last recheck
}

// Receive is a type switch: decide, persist, then answer.
func (a *objectActor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		first := !a.cell.started
		a.load()
		if !(first && a.cell.absent) {
			a.settle(ctx)
		}
	case *actor.Restarting:
		a.cell.restarts++
		a.fields(a.cell.trace).Warn("object actor restarting")
	case *actor.Stopping:
		a.stopTimer()
		for _, t := range []*time.Timer{a.cell.requeue, a.cell.paced} {
			if t != nil {
				t.Stop()
			}
		}
	case *createRequest:
		a.begin(msg.trace)
		plan, err := lifecycle.Create(a.obj, msg.object)
		if err == nil {
			err = a.apply(msg.trace, plan)
		}
		a.answer(ctx, a.obj, false, err)
		a.settle(ctx)
	case *updateRequest:
		a.begin(msg.trace)
		plan, err := lifecycle.Update(a.obj, a.rev, msg.object, msg.pre, a.hook.hold, a.env.now())
		if err == nil {
			err = a.apply(msg.trace, plan)
		}
		if plan.Gone {
			a.answer(ctx, msg.object, false, err)
		} else {
			a.answer(ctx, a.obj, false, err)
		}
		a.settle(ctx)
	case *deleteRequest:
		a.begin(msg.trace)
		last := a.obj
		plan, err := a.decideDelete(msg.opts)
		if err == nil {
			err = a.apply(msg.trace, plan)
		}
		if plan.Gone {
			a.answer(ctx, last, true, err)
			if err == nil && a.hook.deleted != nil {
				a.hook.deleted(a, ctx, last)
			}
		} else {
			a.answer(ctx, a.obj, false, err)
		}
		a.settle(ctx)
	case *graceTick:
		if err := a.apply(a.cell.trace, lifecycle.Expire(a.obj, a.hook.hold, a.env.now())); err != nil {
			a.fields(a.cell.trace).WithField("error", err).Error("delete after grace period")
		}
		a.settle(ctx)
	case *reply: // an answer to a write this actor asked another actor for
		a.outstanding = max(a.outstanding-1, 0)
		if a.hook.answered != nil {
			a.hook.answered(a, msg)
		}
		if a.outstanding == 0 {
			a.settle(ctx)
		}
	case *resyncRequest:
		a.begin(msg.trace)
		if a.hook.resyncLater == nil || !a.hook.resyncLater(a) {
			a.queueResync(ctx)
		}
	case *syncNow:
		a.syncQueued, a.cell.paced = false, nil
		if a.obj != nil && a.hook.sync != nil {
			start := time.Now() // the cost of the sync on the real clock, for pacing
			a.hook.sync(a, ctx)
			a.paceFor(time.Since(start))
		}
		a.settle(ctx)
	case *recheck:
		a.swept = false
		a.settle(ctx)
	case *panicRequest:
		a.begin(msg.trace)
		if a.obj == nil {
			a.answer(ctx, nil, false, fmt.Errorf("inject panic: %w", persistence.ErrNotFound))
			a.settle(ctx)
			return
		}
		ctx.Respond(&reply{object: a.obj})
		panic(fmt.Sprintf("injected panic in %s %s/%s", a.cell.key.Resource, a.cell.key.Namespace, a.cell.key.Name))
	case *recordRequest: // events.go
		a.begin(msg.trace)
		a.countEvent(ctx, msg)
		a.settle(ctx)
	case *eventFlush:
		eventStateOf(a).queued = false
		a.flushEvent()
		a.settle(ctx)
	case *probeRequest:
		a.begin(msg.trace)
		ctx.Respond(&probeReply{pid: ctx.Self(), revision: a.rev, handled: a.cell.handled, restarts: a.cell.restarts})
		a.settle(ctx)
	}
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

// ctrlState returns the controller state of type T kept in the actor's cell (which a
// restarted actor inherits), creating it the first time.
func ctrlState[T any](a *objectActor) *T {
	st, ok := a.cell.ctrl.(*T)
	if !ok {
		st = new(T)
		a.cell.ctrl = st
	}
	return st
}

// begin counts a routed request (see the protocol in manager.go) and notes its trace.
func (a *objectActor) begin(trace string) {
	a.cell.handled++
	a.cell.trace = trace
}

func (a *objectActor) decideDelete(opts DeleteOptions) (lifecycle.Plan, error) {
	var grace int64
	if a.obj != nil && a.hook.grace != nil {
		grace = a.hook.grace(a.obj, opts.GracePeriodSeconds)
	}
	d := lifecycle.Deletion{
		Grace: grace,
		Hold:  a.hook.hold || (a.hook.holdFor != nil && a.hook.holdFor(opts)),
		Pre:   opts.Preconditions,
	}
	plan, err := lifecycle.Delete(a.obj, a.rev, d, a.env.now())
	if err == nil && plan.Op == persistence.OpUpdate && a.hook.terminate != nil {
		a.hook.terminate(plan.Object, opts)
	}
	return plan, err
}

// load sets the state: at first start from what the manager knew, later (after a
// restart) from the store.
func (a *objectActor) load() {
	c := a.cell
	switch {
	case !c.started && c.initial != nil:
		a.obj, a.rev = c.initial.Object, c.initial.Revision
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
		a.obj, a.rev = it.Object, it.Revision
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
	rev, objs, err := a.env.store.Apply(context.Background(), cmd)
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
	if a.obj != nil && a.hook.settle != nil {
		a.hook.settle(a, ctx)
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
	if a.hook.hold {
		return // the kind's settle owns the timer
	}
	if deadline, ok := lifecycle.Deadline(a.obj); ok {
		a.schedule(ctx, min(max(deadline.Sub(a.env.now()), 0), maxTick), &graceTick{})
	} else {
		a.stopTimer()
	}
}

// schedule sends msg to the actor itself after d, replacing any pending timer.
func (a *objectActor) schedule(ctx actor.Context, d time.Duration, msg interface{}) {
	a.stopTimer()
	self, root := ctx.Self(), a.env.root
	a.cell.timer = time.AfterFunc(d, func() { root.Send(self, msg) })
}

// syncAt makes the actor sync again at t (a controller's requeue), replacing any
// earlier requeue.
func (a *objectActor) syncAt(ctx actor.Context, t time.Time) {
	if a.cell.requeue != nil {
		a.cell.requeue.Stop()
	}
	self, root := ctx.Self(), a.env.root
	a.cell.requeue = time.AfterFunc(max(t.Sub(a.env.now()), 0), func() { root.Send(self, &syncNow{}) })
}

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
