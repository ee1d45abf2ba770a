package lifecycle

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/persistence/command"
)

// Plan is the one write a request leads to and what to answer.
type Plan struct {
	Op     command.Op     // 0 when nothing is written
	Object runtime.Object // the new state for OpCreate and OpUpdate (a fresh object, never the current one)
	Gone   bool           // the plan deletes the object
}

// Deletion describes a delete request once the kind has resolved it.
type Deletion struct {
	Grace int64 // seconds the object may take to terminate; 0 means at once
	// Hold keeps the object after its deletionTimestamp until the kind itself removes
	// it (a namespace waits for its contents).
	Hold bool
	Pre  command.Preconditions
}

// Create decides a create: it fails when the object exists.
func Create(cur, obj runtime.Object) (Plan, error) {
	if cur != nil {
		return Plan{}, fmt.Errorf("create: %w", command.ErrAlreadyExists)
	}
	return Plan{Op: command.OpCreate, Object: obj}, nil
}

// Update decides an update of cur (stored at rev) to next. Users cannot change the
// deletion fields, so they are carried over from cur. When cur is terminating, its
// grace period is over and next has no finalizers left, the update deletes it
// instead (unless hold). next is modified in place and must be the caller's own copy.
func Update(cur runtime.Object, rev int64, next runtime.Object, pre command.Preconditions, hold bool, now time.Time) (Plan, error) {
	if cur == nil {
		return Plan{}, fmt.Errorf("update: %w", command.ErrNotFound)
	}
	old, err := meta.Accessor(cur)
	if err != nil {
		return Plan{}, fmt.Errorf("update: %w", err)
	}
	nm, err := meta.Accessor(next)
	if err != nil {
		return Plan{}, fmt.Errorf("update: %w", err)
	}
	if err := pre.Check(old.GetUID(), rev); err != nil {
		return Plan{}, fmt.Errorf("update: %w", err)
	}
	if uid := nm.GetUID(); uid != "" && uid != old.GetUID() {
		return Plan{}, fmt.Errorf("update: uid %s, stored %s: %w", uid, old.GetUID(), command.ErrConflict)
	}
	nm.SetDeletionTimestamp(old.GetDeletionTimestamp())
	nm.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	if ts := old.GetDeletionTimestamp(); ts != nil && !hold && len(nm.GetFinalizers()) == 0 && !now.Before(ts.Time) {
		return Plan{Op: command.OpDelete, Gone: true}, nil
	}
	return Plan{Op: command.OpUpdate, Object: next}, nil
}

// Delete decides a delete of cur (stored at rev). Without grace, finalizers or hold the
// object goes at once. Otherwise it is marked: deletionTimestamp now+grace and
// deletionGracePeriodSeconds; a later delete may only bring the deadline forward.
func Delete(cur runtime.Object, rev int64, d Deletion, now time.Time) (Plan, error) {
	if cur == nil {
		return Plan{}, fmt.Errorf("delete: %w", command.ErrNotFound)
	}
	old, err := meta.Accessor(cur)
	if err != nil {
		return Plan{}, fmt.Errorf("delete: %w", err)
	}
	if err := d.Pre.Check(old.GetUID(), rev); err != nil {
		return Plan{}, fmt.Errorf("delete: %w", err)
	}
	grace := max(d.Grace, 0)
	if grace == 0 && !d.Hold && len(old.GetFinalizers()) == 0 {
		return Plan{Op: command.OpDelete, Gone: true}, nil
	}
	deadline := now.Add(time.Duration(grace) * time.Second)
	if ts := old.GetDeletionTimestamp(); ts != nil && !deadline.Before(ts.Time) {
		return Plan{}, nil // already terminating, at least as soon
	}
	next := cur.DeepCopyObject()
	nm, _ := meta.Accessor(next)
	ts := metav1.NewTime(deadline)
	nm.SetDeletionTimestamp(&ts)
	nm.SetDeletionGracePeriodSeconds(&grace)
	return Plan{Op: command.OpUpdate, Object: next}, nil
}

// Expire decides what a terminating object does at now: it goes once its grace
// period is over and no finalizer (nor hold) keeps it.
func Expire(cur runtime.Object, hold bool, now time.Time) Plan {
	deadline, ok := Deadline(cur)
	if !ok || hold || now.Before(deadline) {
		return Plan{}
	}
	if m, err := meta.Accessor(cur); err != nil || len(m.GetFinalizers()) > 0 {
		return Plan{}
	}
	return Plan{Op: command.OpDelete, Gone: true}
}

// Deadline returns the end of cur's grace period, if it is terminating.
func Deadline(cur runtime.Object) (time.Time, bool) {
	if cur == nil {
		return time.Time{}, false
	}
	m, err := meta.Accessor(cur)
	if err != nil || m.GetDeletionTimestamp() == nil {
		return time.Time{}, false
	}
	return m.GetDeletionTimestamp().Time, true
}
