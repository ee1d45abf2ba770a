package replication

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExpectationsTimeout is how long a sync waits for the pod events of its own creates and
// deletes before it assumes they were lost and syncs again.
const ExpectationsTimeout = 5 * time.Minute

// Expectations are the creates and deletes of the last sync whose pod events have not
// been observed yet. While some are pending (and not expired) Decide creates and deletes
// nothing more, so a pod cache that lags behind the store never causes a double create.
// The zero value expects nothing. It is a value: every method returns a new one and
// never modifies the slices of the receiver.
type Expectations struct {
	Creates []string  `json:"creates,omitempty"` // names of pods created but not yet seen, sorted
	Deletes []string  `json:"deletes,omitempty"` // names of pods deleted but not yet seen gone or terminating, sorted
	Set     time.Time `json:"set,omitzero"`      // when they were recorded
}

// EventType is what happened to a pod, as seen by the RC's actor.
type EventType string

// Pod events. CreateFailed and DeleteFailed are reported by the actor itself when a
// planned create or delete is refused: no watch event will ever come for it.
const (
	Added        EventType = "Added"
	Modified     EventType = "Modified"
	Deleted      EventType = "Deleted"
	CreateFailed EventType = "CreateFailed"
	DeleteFailed EventType = "DeleteFailed"
)

// Event is one observation of a pod.
type Event struct {
	Type EventType   `json:"type"`
	Pod  *corev1.Pod `json:"pod"`
}

// Pending is the number of creates and deletes not yet observed.
func (e Expectations) Pending() int { return len(e.Creates) + len(e.Deletes) }

// Satisfied reports whether a sync may create or delete pods: nothing is pending, or
// the expectations are older than ExpectationsTimeout.
func (e Expectations) Satisfied(now time.Time) bool {
	return e.Pending() == 0 || !now.Before(e.Expiry())
}

// Expiry is when pending expectations stop holding syncs back.
func (e Expectations) Expiry() time.Time { return e.Set.Add(ExpectationsTimeout) }

// Observe returns the expectations after ev: a pod seen added (or a create that failed)
// is no longer expected to be created; a pod seen deleted or terminating (or a delete
// that failed) is no longer expected to be deleted.
func (e Expectations) Observe(ev Event) Expectations {
	if ev.Pod == nil {
		return e
	}
	name := ev.Pod.Name
	switch ev.Type {
	case Added, Modified:
		e.Creates = without(e.Creates, name)
		if ev.Pod.DeletionTimestamp != nil {
			e.Deletes = without(e.Deletes, name)
		}
	case CreateFailed:
		e.Creates = without(e.Creates, name)
	case Deleted, DeleteFailed:
		e.Creates = without(e.Creates, name)
		e.Deletes = without(e.Deletes, name)
	}
	if e.Pending() == 0 {
		return Expectations{}
	}
	return e
}

// expect records the creates and deletes of a sync made at now.
func expect(creates []*corev1.Pod, deletes []string, now time.Time) Expectations {
	if len(creates) == 0 && len(deletes) == 0 {
		return Expectations{}
	}
	e := Expectations{Set: now, Deletes: slices.Sorted(slices.Values(deletes))}
	for _, p := range creates {
		e.Creates = append(e.Creates, p.Name)
	}
	slices.Sort(e.Creates)
	return e
}

// without returns s less name, sharing nothing with s when it changes.
func without(s []string, name string) []string {
	i, ok := slices.BinarySearch(s, name)
	if !ok {
		return s
	}
	out := make([]string, 0, len(s)-1)
	out = append(out, s[:i]...)
	out = append(out, s[i+1:]...)
	if len(out) == 0 {
		return nil
	}
	return out
}

// ObserveState returns the expectations after looking at the pods that exist now (the
// RC's namespace): an expected create whose pod exists is seen, an expected delete
// whose pod is gone or terminating is seen. It is Observe for an actor that reads the
// store's current state rather than a stream of events.
func (e Expectations) ObserveState(pods []*corev1.Pod) Expectations {
	if e.Pending() == 0 {
		return e
	}
	byName := make(map[string]*corev1.Pod, e.Pending())
	want := make(map[string]bool, e.Pending())
	for _, n := range e.Creates {
		want[n] = true
	}
	for _, n := range e.Deletes {
		want[n] = true
	}
	for _, p := range pods {
		if want[p.Name] {
			byName[p.Name] = p
		}
	}
	for _, n := range e.Creates {
		if p, ok := byName[n]; ok {
			e = e.Observe(Event{Type: Added, Pod: p})
		}
	}
	for _, n := range e.Deletes {
		switch p, ok := byName[n]; {
		case !ok:
			e = e.Observe(Event{Type: Deleted, Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}}})
		case p.DeletionTimestamp != nil:
			e = e.Observe(Event{Type: Modified, Pod: p})
		}
	}
	return e
}
