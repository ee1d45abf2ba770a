package replication

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kubeactor/kubeactor/actors/control"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// The replication controller: each RC's own actor keeps spec.replicas pods. Its sync
// reads the pods of the RC's namespace, asks Decide for a plan, and sends the plan's
// writes to the pods' actors; the answers come back through Answered, and the pods'
// changes as resyncs from the pod feed. The expectations live in the controller,
// which a restarted actor keeps, so it never creates a pod twice.

// Finalizers that hold an RC while its pods are dealt with, as in Kubernetes.
const (
	FinalizerOrphan     = metav1.FinalizerOrphanDependents
	FinalizerForeground = metav1.FinalizerDeleteDependents
)

// ResyncPeriod is how often an RC syncs without any event, covering anything lost.
const ResyncPeriod = 30 * time.Second

// Pod writes an RC asks for, in Controller.sent.
const (
	opCreate = "create"
	opDelete = "delete"
)

// Controller is an RC's controller (control.Controller).
type Controller struct {
	exp Expectations
	// synced is the RC's revision at its last sync; dirty says a refused write
	// changed the expectations since. Either makes Settle queue a sync.
	synced int64
	dirty  bool
	// sent maps a pod to the write (create or delete) awaiting its answer, so the
	// answer records the right event.
	sent map[string]string
	// owed says that resyncs from the pod feed were put off until the answers to the
	// last sync's writes are in (see ResyncLater).
	owed bool
	// refusals counts the pod writes refused in a row (a quota, a terminating
	// namespace, an invalid template); the sync after a refusal waits until retryAt
	// (RetryAfter), instead of sending the same refused writes again at once.
	refusals int
	retryAt  time.Time
	// cursor is the slot the next new pod's name starts from (slots.go): above every
	// slot this controller handed out, so a replacement pod gets a new name.
	cursor int
	// settled says that the last sync's plan was Settled; podsSeen is the pods'
	// Changed revision noted before that sync read them. While the RC and every pod
	// are unchanged, a sync (the periodic resync) would only decide the same plan.
	settled  bool
	podsSeen int64
}

var (
	_ control.Controller = (*Controller)(nil)
	_ control.Deleter    = (*Controller)(nil)
	_ control.Deferrer   = (*Controller)(nil)
)

// NewController returns the controller of one RC.
func NewController() control.Controller { return &Controller{} }

func (c *Controller) send(pod, op string) {
	if c.sent == nil {
		c.sent = make(map[string]string)
	}
	c.sent[pod] = op
}

// Deletion holds the RC (with a finalizer, see Terminate) when its pods must be
// orphaned or deleted first; Background deletes it at once and its pods after. A
// delete that names no policy orphans the pods, as the core/v1 API does for an RC.
func (c *Controller) Deletion(_ runtime.Object, _ *int64, propagation string) (int64, bool) {
	p := Propagation(propagation)
	return 0, p == metav1.DeletePropagationOrphan || p == metav1.DeletePropagationForeground
}

// Terminate records, as a finalizer, what must happen to the pods before the RC goes.
func (c *Controller) Terminate(obj runtime.Object, propagation string) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return
	}
	f := FinalizerForeground
	if Propagation(propagation) == metav1.DeletePropagationOrphan {
		f = FinalizerOrphan
	}
	if !slices.Contains(rc.Finalizers, f) {
		rc.Finalizers = append(rc.Finalizers, f)
	}
}

// Propagation is the policy of a delete of an RC: the one asked for, or Orphan when
// none is (the core/v1 API's default for replication controllers; kubectl asks for
// Background).
func Propagation(asked string) metav1.DeletionPropagation {
	if asked == "" {
		return metav1.DeletePropagationOrphan
	}
	return metav1.DeletionPropagation(asked)
}

// Deleted deletes the pods of an RC removed at once (propagation Background).
func (c *Controller) Deleted(fx control.Effects, last runtime.Object) {
	rc, ok := last.(*corev1.ReplicationController)
	if !ok {
		return
	}
	deps := DependentsToDelete(rc, pods(fx, rc), metav1.DeletePropagationBackground)
	for _, name := range deps.Delete {
		fx.Delete(podRef(rc.Namespace, name), true)
	}
}

// Answered notes the answer to a pod create or delete: a refused one will bring no
// pod event.
func (c *Controller) Answered(fx control.Effects, r control.Answer) {
	if r.Ref.Name == "" && r.Err != nil {
		// An answer that will never come (the member that had the pod's actor left):
		// once none is awaited, the next sync plans from the pods as stored. Pod names
		// are derived from the RC and a slot (slots.go), so creating a pod again
		// that was created after all fails with AlreadyExists: never an extra pod.
		if fx.Outstanding() == 0 {
			c.exp, c.sent = Expectations{}, nil
		}
		c.dirty = true
		c.refusals++
		c.retryAt = fx.Now().Add(RetryAfter(c.refusals))
		return
	}
	if r.Ref.Resource != "pods" {
		return
	}
	op := c.sent[r.Ref.Name]
	delete(c.sent, r.Ref.Name)
	if fx.Outstanding() == 0 {
		c.sent = nil // no answer is awaited: forget any lost one
	}
	c.recordAnswer(fx, op, r)
	if r.Err == nil {
		// The answer comes once the write is durable and in the store's cache, where
		// the next sync reads: it is observed now, not when the pod feed gets there.
		// On a master replica that is not the leader, the answer can come before this
		// replica's store has the write (the pod's actor is on the leader): the pods
		// the next sync reads would not show it yet. The expectation is then met by
		// the pod feed (ObserveState at that sync), not by the answer.
		var ev Event
		local := fx.Get(r.Ref)
		switch pod, _ := r.Object.(*corev1.Pod); {
		case op == opCreate && pod != nil:
			if local == nil {
				break
			}
			ev = Event{Type: Added, Pod: pod}
		case op == opDelete && pod != nil && !r.Gone: // a graceful delete: terminating
			if lp, ok := local.(*corev1.Pod); !ok || lp.DeletionTimestamp == nil {
				break
			}
			ev = Event{Type: Modified, Pod: pod}
		case op == opDelete:
			if local != nil {
				break
			}
			ev = Event{Type: Deleted, Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: r.Ref.Name, Namespace: r.Ref.Namespace}}}
		default: // an owner patch
			return
		}
		if ev.Type == "" {
			c.refusals = 0
			return
		}
		c.exp = c.exp.Observe(ev)
		c.dirty = c.dirty || c.exp.Pending() == 0
		c.refusals = 0
		return
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: r.Ref.Name, Namespace: r.Ref.Namespace}}
	if op == opCreate && errors.Is(r.Err, command.ErrAlreadyExists) {
		// Created already, by this RC's actor on another member during a change of
		// the members (the names are the RC's slots): not a refusal. The pod exists,
		// so it stays expected until this replica's store shows it; dropping it would
		// let a sync on a lagging store name one more pod.
		c.dirty = true
		return
	}
	typ := DeleteFailed
	if slices.Contains(c.exp.Creates, r.Ref.Name) {
		typ = CreateFailed
	}
	c.exp = c.exp.Observe(Event{Type: typ, Pod: p})
	c.refusals++
	c.retryAt = fx.Now().Add(RetryAfter(c.refusals))
	fx.Log().WithField("error", r.Err).Warn("pod write refused")
}

// Settle syncs the RC when its own object changed, its expectations were met, or a
// resync was put off; after a refused write it syncs again at retryAt. Changes to
// its pods come as resyncs from the pod feed.
func (c *Controller) Settle(fx control.Effects) {
	switch {
	case c.dirty || c.synced != fx.Revision() || (c.owed && fx.Outstanding() == 0):
		fx.QueueSync()
	case !c.retryAt.IsZero() && fx.Outstanding() == 0:
		fx.SyncAt(c.retryAt)
		c.retryAt = time.Time{}
	}
}

// ResyncLater puts off a resync from the pod feed while the RC awaits answers to its
// creates or deletes: until they are in, a sync could only recount the pods (the
// expectations hold new writes back), and a scale-up of 30,000 pods would recount
// them after every few of its own creates. The last answer settles the RC, which then
// syncs once and sees every change.
func (c *Controller) ResyncLater(fx control.Effects) bool {
	if fx.Outstanding() == 0 || c.exp.Pending() == 0 {
		return false
	}
	c.owed = true
	return true
}

// recordAnswer records the event of an answered pod create or delete, as the
// Kubernetes replication manager does.
func (c *Controller) recordAnswer(fx control.Effects, op string, r control.Answer) {
	rc := fx.Object()
	if rc == nil {
		return
	}
	switch {
	case op == opCreate && r.Err == nil:
		fx.Record(rc, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: "+r.Ref.Name)
	case op == opCreate:
		fx.Record(rc, corev1.EventTypeWarning, "FailedCreate", fmt.Sprintf("Error creating: %v", r.Err))
	case op == opDelete && r.Err == nil:
		fx.Record(rc, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: "+r.Ref.Name)
	case op == opDelete:
		fx.Record(rc, corev1.EventTypeWarning, "FailedDelete", fmt.Sprintf("Error deleting: %v", r.Err))
	}
}

// Sync decides, then sends the writes.
func (c *Controller) Sync(fx control.Effects) {
	rc, ok := fx.Object().(*corev1.ReplicationController)
	if !ok {
		return
	}
	now := fx.Now()
	if c.unchanged(fx) {
		// Nothing Decide reads changed since a settled sync: recounting the
		// namespace's pods (tens of thousands, every ResyncPeriod, for every RC) would
		// decide the same empty plan. The resync still reads the store, so a change
		// whose event was lost is seen at the next one.
		fx.SyncAt(now.Add(ResyncPeriod))
		return
	}
	seen := fx.Changed("pods") // before the read: a change during it makes the next sync look again
	all := pods(fx, rc)
	c.settled = false
	if rc.DeletionTimestamp != nil {
		c.finish(fx, rc, all)
		c.synced, c.dirty, c.owed = fx.Revision(), false, false
		return
	}
	c.exp = c.exp.ObserveState(all)
	if n := len(c.exp.Creates); n > 0 { // why this sync creates nothing more (explain)
		fx.Note("waiting.creates", n)
	}
	if n := len(c.exp.Deletes); n > 0 {
		fx.Note("waiting.deletes", n)
	}
	slots := NewSlots(rc, all, c.exp, c.cursor)
	plan := Decide(rc, all, c.exp, slots.Suffix, now)
	c.exp, c.cursor = plan.Expectations, slots.Next()

	settled := Settled(plan)
	for _, p := range plan.Create {
		if err := fx.Create("pods", p); err != nil {
			c.exp = c.exp.Observe(Event{Type: CreateFailed, Pod: p})
			fx.Log().WithField("error", err).Error("pod from template is invalid")
			fx.Record(rc, corev1.EventTypeWarning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
			continue
		}
		c.send(p.Name, opCreate)
	}
	for _, name := range plan.Delete {
		fx.Delete(podRef(rc.Namespace, name), false)
		c.send(name, opDelete)
	}
	patchPods(fx, all, append(plan.Adopt, plan.Release...))
	if n := len(plan.Adopt); n > 0 { // the sync's span says what it took over and let go (explain)
		fx.Note("decided.adopted", n)
	}
	if n := len(plan.Release); n > 0 {
		fx.Note("decided.released", n)
	}
	if len(plan.Create)+len(plan.Delete) > 0 {
		fx.Log().WithFields(logrus.Fields{"create": len(plan.Create), "delete": len(plan.Delete)}).Debug("rc sync")
	}
	if plan.StatusChanged {
		next := rc.DeepCopy()
		next.Status = plan.Status
		if err := fx.Write(next); err != nil {
			fx.Log().WithField("error", err).Error("write own status")
		}
	}
	requeue := now.Add(ResyncPeriod)
	if !plan.Requeue.IsZero() && plan.Requeue.Before(requeue) {
		requeue = plan.Requeue
	}
	fx.SyncAt(requeue)
	c.synced, c.dirty, c.owed = fx.Revision(), false, false
	c.settled, c.podsSeen = settled && c.refusals == 0, seen
}

// unchanged reports whether a sync now would decide what the last one did: that sync
// was settled, and since then neither the RC nor any pod changed, no write of it is
// awaited and no refusal or owed resync asks for another look.
func (c *Controller) unchanged(fx control.Effects) bool {
	return c.settled && !c.dirty && !c.owed && c.exp.Pending() == 0 && fx.Outstanding() == 0 &&
		c.synced == fx.Revision() && fx.Changed("pods") <= c.podsSeen
}

// finish deals with the pods of an RC held for deletion (Orphan or Foreground) and
// removes the RC once none is left to deal with.
func (c *Controller) finish(fx control.Effects, rc *corev1.ReplicationController, all []*corev1.Pod) {
	policy := metav1.DeletePropagationForeground
	if slices.Contains(rc.Finalizers, FinalizerOrphan) {
		policy = metav1.DeletePropagationOrphan
	}
	deps := DependentsToDelete(rc, all, policy)
	if deps.Done() {
		next := rc.DeepCopy()
		next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool {
			return f == FinalizerOrphan || f == FinalizerForeground
		})
		if err := fx.Write(next); err != nil { // with no finalizer left, the update removes the RC
			fx.Log().WithField("error", err).Error("write own status")
		}
		return
	}
	if fx.Outstanding() > 0 {
		return // the answers to the last round come first
	}
	for _, name := range deps.Delete {
		fx.Delete(podRef(rc.Namespace, name), false)
		c.send(name, opDelete)
	}
	patchPods(fx, all, deps.Orphan)
	fx.SyncAt(fx.Now().Add(time.Second)) // terminating pods: look again
}

// patchPods applies ownerReference patches (adopt, release, orphan) as updates with
// the pod's uid and revision as preconditions.
func patchPods(fx control.Effects, all []*corev1.Pod, patches []PodPatch) {
	if len(patches) == 0 {
		return
	}
	byName := make(map[string]*corev1.Pod, len(all))
	for _, p := range all {
		byName[p.Name] = p
	}
	for _, pp := range patches {
		p, ok := byName[pp.Name]
		if !ok || p.UID != pp.UID {
			continue
		}
		next, err := applyPodPatch(p, pp.Patch)
		if err == nil {
			err = fx.Update("pods", p, next)
		}
		if err != nil {
			fx.Log().WithField("error", err).Error("patch pod owner")
		}
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

func podRef(ns, name string) control.Ref {
	return control.Ref{Resource: "pods", Namespace: ns, Name: name}
}

// pods returns the pods stored in rc's namespace that are Relevant to rc (in the
// store's order): a sync reads no other, and the namespace may hold tens of
// thousands of other RCs' pods, so it reads them from the store's index of owners
// (Related gives what Relevant selects, the filter keeps it exact).
func pods(fx control.Effects, rc *corev1.ReplicationController) []*corev1.Pod {
	var out []*corev1.Pod
	fx.Related("pods", rc.Namespace, rc.UID, rc.Name+"-", func(obj runtime.Object) bool {
		if p, ok := obj.(*corev1.Pod); ok && Relevant(rc, p) {
			out = append(out, p)
		}
		return true
	})
	return out
}
