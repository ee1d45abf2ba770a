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
	"github.com/kubeactor/kubeactor/persistence"
)

// Events. A recorder (any actor) turns an occurrence into an event.Record, combines
// similar ones with its own event.Aggregator, and sends it to the events manager under
// the event's deterministic name: the event's own actor (event.Controller) is its
// only writer.

// DefaultEventTTL is how long an event is kept after it was last seen (--event-ttl).
const DefaultEventTTL = time.Hour

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
	e.recordEvents(sender, agg, trace, involved, component, eventType, reason, message, e.now(), 1)
}

// recordEvents is recordEvent for count identical occurrences, the latest at at: a
// recorder that held occurrences back (the scheduler's EventBudget) sends them as
// one record, one write.
func (e *env) recordEvents(sender actor.SenderContext, agg *event.Aggregator, trace string, involved runtime.Object,
	component, eventType, reason, message string, at time.Time, count int32) {
	pid, ok := e.managers["events"]
	if !ok {
		return
	}
	ref, err := objectReference(involved)
	if err != nil {
		e.log.WithFields(logrus.Fields{"trace": trace, "reason": reason, "error": err}).Warn("record event")
		return
	}
	src := corev1.EventSource{Component: component}
	if e.cluster != nil { // which member of the control plane reported it
		src.Host = e.cluster.self
	}
	r := event.Record{
		Involved: ref, Source: src,
		Type: eventType, Reason: reason, Message: message, At: metav1.NewTime(at), Count: count,
	}
	if agg != nil {
		r = agg.Observe(r)
	}
	key := persistence.Key{Resource: "events", Namespace: r.Namespace(), Name: r.Name()}
	sender.Send(pid, &kindRequest{envelope: envelope{trace: trace, key: key}, payload: r})
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
