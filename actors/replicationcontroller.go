package actors

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/actors/replication"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// The replication controller: each RC's own actor keeps spec.replicas pods. Its sync
// reads the pods of the RC's namespace from the store, asks replication.Decide for a
// plan, and sends the plan's writes to the pods' actors; the answers come back as
// replies, and the pods' changes as resyncs from the pod feed. The expectations live
// in the actor's cell, so a restarted actor never creates a pod twice.

// Finalizers that hold an RC while its pods are dealt with, as in Kubernetes.
const (
	finalizerOrphan     = metav1.FinalizerOrphanDependents
	finalizerForeground = metav1.FinalizerDeleteDependents
)

// rcResyncPeriod is how often an RC syncs without any event, covering anything lost.
const rcResyncPeriod = 30 * time.Second

// rcState is what an RC's actor keeps across restarts.
type rcState struct {
	exp replication.Expectations
	// synced is the RC's revision at its last sync; dirty says a refused write
	// changed the expectations since. Either makes settle queue a sync.
	synced int64
	dirty  bool
	// sent maps a pod to the write (create or delete) awaiting its answer, so the
	// answer records the right event.
	sent map[string]string
	// owed says that resyncs from the pod feed were put off until the answers to the
	// last sync's writes are in (see rcResyncLater).
	owed bool
}

// Pod writes an RC's actor asks for, in rcState.sent.
const (
	rcCreate = "create"
	rcDelete = "delete"
)

func (st *rcState) send(pod, op string) {
	if st.sent == nil {
		st.sent = make(map[string]string)
	}
	st.sent[pod] = op
}

func rcHolds(opts DeleteOptions) bool {
	p := metav1.DeletionPropagation(opts.PropagationPolicy)
	return p == metav1.DeletePropagationOrphan || p == metav1.DeletePropagationForeground
}

// terminateRC records, as a finalizer, what must happen to the pods before the RC goes.
func terminateRC(obj runtime.Object, opts DeleteOptions) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return
	}
	f := finalizerForeground
	if metav1.DeletionPropagation(opts.PropagationPolicy) == metav1.DeletePropagationOrphan {
		f = finalizerOrphan
	}
	if !slices.Contains(rc.Finalizers, f) {
		rc.Finalizers = append(rc.Finalizers, f)
	}
}

// rcDeleted deletes the pods of an RC removed at once (propagation Background).
func rcDeleted(a *objectActor, ctx actorContext, last runtime.Object) {
	rc, ok := last.(*corev1.ReplicationController)
	if !ok {
		return
	}
	deps := replication.DependentsToDelete(rc, a.env.pods(rc.Namespace), metav1.DeletePropagationBackground)
	for _, name := range deps.Delete {
		ctx.Send(a.env.managers["pods"], &deleteRequest{envelope: envelope{trace: a.cell.trace, key: podKey(rc.Namespace, name)}})
	}
}

func rcStateOf(a *objectActor) *rcState { return ctrlState[rcState](a) }

// rcAnswered notes a create or delete that was refused: no pod event will come for it.
func rcAnswered(a *objectActor, r *reply) {
	if r.key.Resource != "pods" {
		return
	}
	st := rcStateOf(a)
	op := st.sent[r.key.Name]
	delete(st.sent, r.key.Name)
	if a.outstanding == 0 {
		st.sent = nil // no answer is awaited: forget any lost one
	}
	rcRecordAnswer(a, op, r)
	if r.err == nil {
		// The answer comes once the write is durable and in the store's cache, where
		// the next sync reads: it is observed now, not when the pod feed gets there.
		var ev replication.Event
		switch pod, _ := r.object.(*corev1.Pod); {
		case op == rcCreate && pod != nil:
			ev = replication.Event{Type: replication.Added, Pod: pod}
		case op == rcDelete && pod != nil && !r.gone: // a graceful delete: terminating
			ev = replication.Event{Type: replication.Modified, Pod: pod}
		case op == rcDelete:
			ev = replication.Event{Type: replication.Deleted, Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: r.key.Name, Namespace: r.key.Namespace}}}
		default: // an owner patch
			return
		}
		st.exp = st.exp.Observe(ev)
		st.dirty = st.dirty || st.exp.Pending() == 0
		return
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: r.key.Name, Namespace: r.key.Namespace}}
	typ := replication.DeleteFailed
	if slices.Contains(st.exp.Creates, r.key.Name) {
		typ = replication.CreateFailed
	}
	st.exp = st.exp.Observe(replication.Event{Type: typ, Pod: p})
	st.dirty = true
	a.fields(a.cell.trace).WithField("error", r.err).Warn("pod write refused")
}

// settleRC syncs the RC when its own object changed, a refused write changed its
// expectations, or a resync was put off; changes to its pods come as resyncs from
// the pod feed.
func settleRC(a *objectActor, ctx actorContext) {
	if st := rcStateOf(a); st.dirty || st.synced != a.rev || (st.owed && a.outstanding == 0) {
		a.queueSync(ctx)
	}
}

// rcResyncLater puts off a resync from the pod feed while the RC awaits answers to its
// creates or deletes: until they are in, a sync could only recount the pods (the
// expectations hold new writes back), and a scale-up of 30,000 pods would recount
// them after every few of its own creates. The last answer settles the RC, which then
// syncs once and sees every change.
func rcResyncLater(a *objectActor) bool {
	st := rcStateOf(a)
	if a.outstanding == 0 || st.exp.Pending() == 0 {
		return false
	}
	st.owed = true
	return true
}

// rcRecordAnswer records the event of an answered pod create or delete, as the
// Kubernetes replication manager does.
func rcRecordAnswer(a *objectActor, op string, r *reply) {
	if a.obj == nil {
		return
	}
	switch {
	case op == rcCreate && r.err == nil:
		a.record(a.env.root, a.obj, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: "+r.key.Name)
	case op == rcCreate:
		a.record(a.env.root, a.obj, corev1.EventTypeWarning, "FailedCreate", fmt.Sprintf("Error creating: %v", r.err))
	case op == rcDelete && r.err == nil:
		a.record(a.env.root, a.obj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: "+r.key.Name)
	case op == rcDelete:
		a.record(a.env.root, a.obj, corev1.EventTypeWarning, "FailedDelete", fmt.Sprintf("Error deleting: %v", r.err))
	}
}

// syncRC is the RC's controller: decide, then send the writes.
func syncRC(a *objectActor, ctx actorContext) {
	rc, ok := a.obj.(*corev1.ReplicationController)
	if !ok {
		return
	}
	now := a.env.now()
	st := rcStateOf(a)
	pods := a.env.pods(rc.Namespace)
	if rc.DeletionTimestamp != nil {
		a.finishRC(ctx, rc, pods)
		st.synced, st.dirty, st.owed = a.rev, false, false
		return
	}
	st.exp = st.exp.ObserveState(pods)
	plan := replication.Decide(rc, pods, st.exp, func() string { return rand.String(5) }, now)
	st.exp = plan.Expectations

	pm := a.env.managers["pods"]
	for _, p := range plan.Create {
		if err := prepareNew("pods", p, now); err != nil {
			st.exp = st.exp.Observe(replication.Event{Type: replication.CreateFailed, Pod: p})
			a.fields(a.cell.trace).WithField("error", err).Error("pod from template is invalid")
			a.record(ctx, rc, corev1.EventTypeWarning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
			continue
		}
		ctx.Request(pm, &createRequest{envelope: envelope{trace: a.cell.trace, key: podKey(p.Namespace, p.Name)}, object: p})
		st.send(p.Name, rcCreate)
		a.outstanding++
	}
	for _, name := range plan.Delete {
		ctx.Request(pm, &deleteRequest{envelope: envelope{trace: a.cell.trace, key: podKey(rc.Namespace, name)}})
		st.send(name, rcDelete)
		a.outstanding++
	}
	a.patchPods(ctx, rc.Namespace, pods, append(plan.Adopt, plan.Release...))
	if len(plan.Create)+len(plan.Delete) > 0 {
		a.fields(a.cell.trace).WithFields(logrus.Fields{"create": len(plan.Create), "delete": len(plan.Delete)}).Debug("rc sync")
	}
	if plan.StatusChanged {
		next := rc.DeepCopy()
		next.Status = plan.Status
		a.writeSelf(next)
	}
	requeue := now.Add(rcResyncPeriod)
	if !plan.Requeue.IsZero() && plan.Requeue.Before(requeue) {
		requeue = plan.Requeue
	}
	a.syncAt(ctx, requeue)
	st.synced, st.dirty, st.owed = a.rev, false, false
}

// finishRC deals with the pods of an RC held for deletion (Orphan or Foreground) and
// removes the RC once none is left to deal with.
func (a *objectActor) finishRC(ctx actorContext, rc *corev1.ReplicationController, pods []*corev1.Pod) {
	policy := metav1.DeletePropagationForeground
	if slices.Contains(rc.Finalizers, finalizerOrphan) {
		policy = metav1.DeletePropagationOrphan
	}
	deps := replication.DependentsToDelete(rc, pods, policy)
	owned := 0
	for _, p := range pods {
		if p.Namespace == rc.Namespace && metav1.IsControlledBy(p, rc) {
			owned++
		}
	}
	if owned == 0 {
		next := rc.DeepCopy()
		next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool {
			return f == finalizerOrphan || f == finalizerForeground
		})
		a.writeSelf(next) // with no finalizer left, the update removes the RC
		return
	}
	if a.outstanding > 0 {
		return // the answers to the last round come first
	}
	for _, name := range deps.Delete {
		ctx.Request(a.env.managers["pods"], &deleteRequest{envelope: envelope{trace: a.cell.trace, key: podKey(rc.Namespace, name)}})
		rcStateOf(a).send(name, rcDelete)
		a.outstanding++
	}
	a.patchPods(ctx, rc.Namespace, pods, deps.Orphan)
	a.syncAt(ctx, a.env.now().Add(time.Second)) // terminating pods: look again
}

// patchPods applies ownerReference patches (adopt, release, orphan) as updates with
// the pod's uid and revision as preconditions.
func (a *objectActor) patchPods(ctx actorContext, ns string, pods []*corev1.Pod, patches []replication.PodPatch) {
	if len(patches) == 0 {
		return
	}
	byName := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		byName[p.Name] = p
	}
	for _, pp := range patches {
		p, ok := byName[pp.Name]
		if !ok || p.UID != pp.UID {
			continue
		}
		next, err := applyPodPatch(p, pp.Patch)
		if err != nil {
			a.fields(a.cell.trace).WithField("error", err).Error("patch pod owner")
			continue
		}
		rv, _ := parseRV(p.ResourceVersion)
		ctx.Request(a.env.managers["pods"], &updateRequest{envelope: envelope{trace: a.cell.trace, key: podKey(ns, p.Name)},
			object: next, pre: command.Preconditions{UID: p.UID, ResourceVersion: rv}})
		a.outstanding++
	}
}

// writeSelf persists a new state of the actor's own object (a controller's status or
// finalizers), logging a failure: the next sync tries again.
func (a *objectActor) writeSelf(next runtime.Object) {
	plan, err := lifecycle.Update(a.obj, a.rev, next, command.Preconditions{}, a.hook.hold, a.env.now())
	if err == nil {
		err = a.apply(a.cell.trace, plan)
	}
	if err != nil {
		a.fields(a.cell.trace).WithField("error", err).Error("write own status")
	}
}

func applyPodPatch(p *corev1.Pod, patch []byte) (*corev1.Pod, error) {
	cur, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(cur, patch, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	next := &corev1.Pod{}
	if err := json.Unmarshal(merged, next); err != nil {
		return nil, err
	}
	return next, nil
}

func podKey(ns, name string) persistence.Key {
	return persistence.Key{Resource: "pods", Namespace: ns, Name: name}
}

// pods returns the pods stored in namespace ns.
func (e *env) pods(ns string) []*corev1.Pod {
	var out []*corev1.Pod
	e.store.Snapshot("pods").Ascend(ns, "", func(it *persistence.Item) bool {
		if p, ok := it.Object.(*corev1.Pod); ok {
			out = append(out, p)
		}
		return true
	})
	return out
}

// podToRCs routes a pod's change to the RC that controls it or, for an orphan, to
// every RC of its namespace whose selector matches it (which may adopt it).
func podToRCs(e *env, ev persistence.Event) []persistence.Key {
	p, ok := ev.Item.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		if ref.Kind != "ReplicationController" {
			return nil
		}
		return []persistence.Key{{Resource: "replicationcontrollers", Namespace: p.Namespace, Name: ref.Name}}
	}
	if ev.Type == persistence.Deleted {
		return nil
	}
	var keys []persistence.Key
	e.store.Snapshot("replicationcontrollers").Ascend(p.Namespace, "", func(it *persistence.Item) bool {
		rc, ok := it.Object.(*corev1.ReplicationController)
		if ok && len(rc.Spec.Selector) > 0 && labels.ValidatedSetSelector(rc.Spec.Selector).Matches(labels.Set(p.Labels)) {
			keys = append(keys, it.Key)
		}
		return true
	})
	return keys
}

func uuidUID() types.UID { return types.UID(uuid.NewString()) }

// parseRV reads a resourceVersion (the store's revision).
func parseRV(rv string) (int64, error) { return strconv.ParseInt(rv, 10, 64) }
