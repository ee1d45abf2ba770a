package actors

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/service"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// The endpoints controller: each service's own actor keeps the Endpoints object of
// the same name equal to service.Endpoints over the pods of its namespace. Its sync
// runs when the service changes and when the pod feed says a pod it selects, or
// lists, changed; it writes through the endpoints' own actor, one write at a time.
// The actor also reports what its service holds to the services manager, which owns
// the cluster IP and node port allocators (serviceips.go).

// serviceRetry is how long a service waits to write its endpoints again after a
// refused write.
const serviceRetry = time.Second

// serviceState is what a service's actor keeps across restarts.
type serviceState struct {
	synced   int64     // the service's revision last synced
	dirty    bool      // a sync was put off while a write was outstanding
	retry    bool      // the last write was refused: sync again after serviceRetry
	reported uint64    // handled count last reported to the manager
	rev      int64     // revision last reported
	sentAt   time.Time // when the outstanding endpoints write was sent
}

func serviceStateOf(a *objectActor) *serviceState { return ctrlState[serviceState](a) }

// settleService reports what the service holds and syncs when there is a reason to.
func settleService(a *objectActor, ctx actorContext) {
	st := serviceStateOf(a)
	if st.reported != a.cell.handled || st.rev != a.rev {
		svc, _ := a.obj.(*corev1.Service)
		ctx.Send(ctx.Parent(), &serviceHeld{
			key: objKey{a.cell.key.Namespace, a.cell.key.Name}, pid: ctx.Self(), handled: a.cell.handled, svc: svc,
		})
		st.reported, st.rev = a.cell.handled, a.rev
	}
	if a.outstanding > 0 {
		return
	}
	if st.retry {
		st.retry = false
		a.syncAt(ctx, a.env.now().Add(serviceRetry))
		return
	}
	switch {
	case st.synced != a.rev: // the service itself changed
		a.queueSync(ctx)
	case st.dirty: // its pods changed: paced, like any resync
		a.queueResync(ctx)
	}
}

// syncService writes the service's endpoints when they differ from the stored ones.
func syncService(a *objectActor, ctx actorContext) {
	svc, ok := a.obj.(*corev1.Service)
	if !ok {
		return
	}
	st := serviceStateOf(a)
	st.synced = a.rev
	if a.outstanding > 0 {
		st.dirty = true
		return
	}
	st.dirty = false
	em, ok := a.env.managers["endpoints"]
	if !ok || svc.DeletionTimestamp != nil || len(svc.Spec.Selector) == 0 {
		return // endpoints of a service without a selector are the user's
	}
	want := service.Endpoints(svc, a.env.pods(svc.Namespace))
	key := endpointsKey(svc.Namespace, svc.Name)
	var cur *corev1.Endpoints
	if it, err := a.env.store.Get(key); err == nil {
		cur, _ = it.Object.(*corev1.Endpoints)
	}
	if !service.Changed(cur, want) {
		return
	}
	if cur == nil {
		if err := prepareNew("endpoints", want, a.env.now()); err != nil {
			a.fields(a.cell.trace).WithField("error", err).Error("endpoints are invalid")
			return
		}
		ctx.Request(em, &createRequest{envelope: envelope{trace: a.cell.trace, key: key}, object: want})
	} else {
		next := cur.DeepCopy()
		next.Subsets, next.Labels = want.Subsets, want.Labels
		rv, _ := parseRV(cur.ResourceVersion)
		ctx.Request(em, &updateRequest{envelope: envelope{trace: a.cell.trace, key: key}, object: next,
			pre: command.Preconditions{UID: cur.UID, ResourceVersion: rv}})
	}
	a.outstanding++
	st.sentAt = time.Now()
}

// serviceAnswered paces the next sync by the write's cost too (an Endpoints object of
// thousands of addresses costs more to write than to compute), and notes a refused
// write: the next sync tries again.
func serviceAnswered(a *objectActor, r *reply) {
	a.paceFor(time.Since(serviceStateOf(a).sentAt))
	if r.err == nil {
		return
	}
	serviceStateOf(a).retry = true
	a.fields(a.cell.trace).WithField("error", r.err).Warn("endpoints write refused")
}

// serviceDeleted deletes the endpoints of a deleted service.
func serviceDeleted(a *objectActor, ctx actorContext, last runtime.Object) {
	if em, ok := a.env.managers["endpoints"]; ok {
		ctx.Send(em, &deleteRequest{envelope: envelope{trace: a.cell.trace, key: endpointsKey(a.cell.key.Namespace, a.cell.key.Name)}})
	}
}

// podToServices routes a pod's change to the services of its namespace whose selector
// matches the pod, and to those whose endpoints list it (it may have stopped matching).
func podToServices(e *env, ev persistence.Event) []persistence.Key {
	p, ok := ev.Item.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	set := labels.Set(p.Labels)
	seen := map[string]bool{}
	var keys []persistence.Key
	e.store.Snapshot("services").Ascend(p.Namespace, "", func(it *persistence.Item) bool {
		svc, ok := it.Object.(*corev1.Service)
		if ok && len(svc.Spec.Selector) > 0 && labels.ValidatedSetSelector(svc.Spec.Selector).Matches(set) {
			keys = append(keys, it.Key)
			seen[svc.Name] = true
		}
		return true
	})
	e.store.Snapshot("endpoints").Ascend(p.Namespace, "", func(it *persistence.Item) bool {
		ep, ok := it.Object.(*corev1.Endpoints)
		if ok && !seen[ep.Name] && lists(ep, p) {
			keys = append(keys, persistence.Key{Resource: "services", Namespace: p.Namespace, Name: ep.Name})
		}
		return true
	})
	return keys
}

// lists reports whether ep has an address of pod p.
func lists(ep *corev1.Endpoints, p *corev1.Pod) bool {
	for _, ss := range ep.Subsets {
		for _, as := range [][]corev1.EndpointAddress{ss.Addresses, ss.NotReadyAddresses} {
			for _, a := range as {
				if a.TargetRef != nil && a.TargetRef.Kind == "Pod" && a.TargetRef.Name == p.Name {
					return true
				}
			}
		}
	}
	return false
}

func endpointsKey(ns, name string) persistence.Key {
	return persistence.Key{Resource: "endpoints", Namespace: ns, Name: name}
}
