package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/event"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// Events. A recorder (any actor) turns an occurrence into an event.Record, combines
// similar ones with its own event.Aggregator, and sends a recordRequest to the events
// manager under the event's deterministic name: the event's own actor is its only
// writer, creating it with count 1 or bumping its count and lastTimestamp. Bumps that
// arrive while the actor is busy are written together (one write per burst). Each
// event actor deletes its event once lastTimestamp is older than Options.EventTTL.

// DefaultEventTTL is how long an event is kept after it was last seen (--event-ttl).
const DefaultEventTTL = time.Hour

// eventTick bounds how long an event's actor waits before looking at its expiry
// again, so that a clock that jumps is noticed within it.
const eventTick = 10 * time.Minute

// recordRequest asks an event's actor to count one occurrence. Nobody answers it.
type recordRequest struct {
	envelope
	record event.Record
}

// eventFlush is what an event's actor sends itself to write the bumps it collected.
type eventFlush struct{}

// eventState is what an event's actor keeps across restarts (in cell.ctrl).
type eventState struct {
	pending event.Pending
	queued  bool // an eventFlush is in the mailbox
}

var eventHook = &hook{settle: settleEvent, sync: expireEvent}

// record records an event about involved on behalf of this object actor's kind
// (the kind's Controller in the table of kinds is the source component), without blocking: the write is the event
// actor's. eventType is corev1.EventTypeNormal or corev1.EventTypeWarning; reason is
// CamelCase (SuccessfulCreate); message is for humans. Similar events this actor
// records are combined (see event.Aggregator). Any sender works, including the root
// context from a hook without an actor context.
func (a *objectActor) record(sender actor.SenderContext, involved runtime.Object, eventType, reason, message string) {
	if a.cell.recorder == nil {
		a.cell.recorder = &event.Aggregator{}
	}
	component := a.cell.key.Resource + "-controller"
	if r, ok := kinds.Lookup(a.cell.key.Resource); ok && r.Controller != "" {
		component = r.Controller
	}
	a.env.recordEvent(sender, a.cell.recorder, a.cell.trace, involved, component, eventType, reason, message)
}

// recordEvent records an event about involved reported by component, for actors that
// are not object actors (the scheduler). agg is the caller's own aggregator (kept in
// its state across messages; nil: no combining of similar events); trace is the
// trace of the request that caused the event, or "". It never blocks.
func (e *env) recordEvent(sender actor.SenderContext, agg *event.Aggregator, trace string, involved runtime.Object,
	component, eventType, reason, message string) {
	pid, ok := e.managers["events"]
	if !ok {
		return
	}
	ref, err := objectReference(involved)
	if err != nil {
		e.log.WithFields(logrus.Fields{"trace": trace, "reason": reason, "error": err}).Warn("record event")
		return
	}
	r := event.Record{
		Involved: ref, Source: corev1.EventSource{Component: component},
		Type: eventType, Reason: reason, Message: message, At: metav1.NewTime(e.now()),
	}
	if agg != nil {
		r = agg.Observe(r)
	}
	key := persistence.Key{Resource: "events", Namespace: r.Namespace(), Name: r.Name()}
	sender.Send(pid, &recordRequest{envelope: envelope{trace: trace, key: key}, record: r})
}

// objectReference is the reference an event keeps to the object it is about.
func objectReference(obj runtime.Object) (corev1.ObjectReference, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return corev1.ObjectReference{}, fmt.Errorf("event about %T: %w", obj, err)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		kinds, _, err := kinds.Scheme.ObjectKinds(obj)
		if err != nil || len(kinds) == 0 {
			return corev1.ObjectReference{}, fmt.Errorf("event about %T: no kind: %w", obj, err)
		}
		gvk = kinds[0]
	}
	return corev1.ObjectReference{
		Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String(),
		Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
	}, nil
}

func eventStateOf(a *objectActor) *eventState { return ctrlState[eventState](a) }

// countEvent notes one occurrence. The first one of an absent event is written at
// once (an actor without an object is stopped when idle); later ones wait for the
// eventFlush queued behind the messages already in the mailbox.
func (a *objectActor) countEvent(ctx actorContext, msg *recordRequest) {
	st := eventStateOf(a)
	st.pending.Add(msg.record)
	if a.obj == nil {
		a.flushEvent()
		return
	}
	if !st.queued {
		st.queued = true
		ctx.Send(ctx.Self(), &eventFlush{})
	}
}

// flushEvent writes the collected occurrences as one create or bump. A failed write
// is logged and dropped: events are best effort.
func (a *objectActor) flushEvent() {
	st := eventStateOf(a)
	if st.pending.Count == 0 {
		return
	}
	p := st.pending
	st.pending = event.Pending{}
	cur, _ := a.obj.(*corev1.Event)
	next, create := event.Next(cur, p)
	var plan lifecycle.Plan
	var err error
	if create {
		if err = prepareNew("events", next, a.env.now()); err == nil {
			plan, err = lifecycle.Create(a.obj, next)
		}
	} else {
		plan, err = lifecycle.Update(a.obj, a.rev, next, command.Preconditions{}, false, a.env.now())
	}
	if err == nil {
		err = a.apply(a.cell.trace, plan)
	}
	if err != nil {
		a.fields(a.cell.trace).WithFields(logrus.Fields{"count": p.Count, "error": err}).Warn("write event")
	}
}

// settleEvent schedules the look at the event's expiry.
func settleEvent(a *objectActor, ctx actorContext) {
	e, ok := a.obj.(*corev1.Event)
	if !ok {
		return
	}
	now := a.env.now()
	at := event.Expiry(e, a.env.eventTTL)
	if limit := now.Add(eventTick); at.After(limit) {
		at = limit
	}
	a.syncAt(ctx, at)
}

// expireEvent deletes the event once it has not been seen for the TTL.
func expireEvent(a *objectActor, _ actorContext) {
	e, ok := a.obj.(*corev1.Event)
	if !ok || eventStateOf(a).pending.Count > 0 {
		return // the flush comes first and moves lastTimestamp
	}
	now := a.env.now()
	if now.Before(event.Expiry(e, a.env.eventTTL)) {
		return
	}
	plan, err := lifecycle.Delete(a.obj, a.rev, lifecycle.Deletion{}, now)
	if err == nil {
		err = a.apply(a.cell.trace, plan)
	}
	if err != nil {
		a.fields(a.cell.trace).WithField("error", err).Warn("expire event")
	}
}
