package replication

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// world simulates the store, the RC actor's lagging pod cache (fed by an ordered
// event stream) and the actor's expectations.
type world struct {
	t       *testing.T
	rng     *rand.Rand
	rc      *corev1.ReplicationController
	now     time.Time
	store   map[string]*corev1.Pod
	cache   map[string]*corev1.Pod
	events  []Event // store changes not yet seen by the cache
	exp     Expectations
	scaling bool // replicas change during the run
}

func newWorld(t *testing.T, seed uint64, replicas int32, scaling bool) *world {
	w := &world{
		t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b9)), rc: newRC("web", replicas).obj(), now: now,
		store: map[string]*corev1.Pod{}, cache: map[string]*corev1.Pod{}, scaling: scaling,
	}
	// Some orphans created by hand before the RC, for it to adopt.
	for i := range w.rng.IntN(3) {
		p := newPod(fmt.Sprintf("hand-%d", i), w.rc).orphan().obj()
		w.store[p.Name] = p
		w.cache[p.Name] = p
	}
	return w
}

// suffix draws from a small alphabet so that names sometimes collide with pods the
// cache has not seen yet; the store then refuses the create.
func (w *world) suffix() string {
	const chars = "abc"
	b := make([]byte, 3)
	for i := range b {
		b[i] = chars[w.rng.IntN(len(chars))]
	}
	return string(b)
}

func (w *world) emit(typ EventType, p *corev1.Pod) {
	w.events = append(w.events, Event{typ, p.DeepCopy()})
}

func (w *world) activeOwned() int { return w.active(false) }

// active counts the active pods of the RC in the store, or only those it created.
func (w *world) active(created bool) int {
	n := 0
	for _, p := range w.store {
		if created && strings.HasPrefix(p.Name, "hand-") {
			continue
		}
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == w.rc.UID && isActive(p) {
			n++
		}
	}
	return n
}

func (w *world) deliver() {
	ev := w.events[0]
	w.events = w.events[1:]
	if ev.Type == Deleted {
		delete(w.cache, ev.Pod.Name)
	} else {
		w.cache[ev.Pod.Name] = ev.Pod
	}
	w.exp = w.exp.Observe(ev)
}

// sync runs Decide on the cache and applies the plan to the store; it reports whether
// the plan wrote anything.
func (w *world) sync() bool {
	pods := slices.Collect(func(yield func(*corev1.Pod) bool) {
		for _, p := range w.cache {
			if !yield(p) {
				return
			}
		}
	})
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	satisfied := w.exp.Satisfied(w.now)
	plan := Decide(w.rc, pods, w.exp, w.suffix, w.now)
	if !satisfied && len(plan.Create)+len(plan.Delete) > 0 {
		w.t.Fatalf("created %d and deleted %d while expectations %+v were pending", len(plan.Create), len(plan.Delete), w.exp)
	}
	w.exp = plan.Expectations
	for i, a := range append(slices.Clone(plan.Adopt), plan.Release...) {
		p, ok := w.store[a.Name]
		if !ok || p.UID != a.UID {
			continue
		}
		p = p.DeepCopy()
		if i < len(plan.Adopt) {
			if metav1.GetControllerOf(p) != nil {
				continue // the patch would conflict
			}
			p.OwnerReferences = append(p.OwnerReferences, *metav1.NewControllerRef(w.rc, Kind))
		} else {
			p.OwnerReferences = nil
		}
		w.store[p.Name] = p
		w.emit(Modified, p)
	}
	for _, p := range plan.Create {
		if _, taken := w.store[p.Name]; taken || w.rng.IntN(20) == 0 {
			w.exp = w.exp.Observe(Event{CreateFailed, p})
			continue
		}
		p = p.DeepCopy()
		p.UID = types.UID(fmt.Sprintf("uid-%s-%d", p.Name, w.now.UnixNano()))
		p.CreationTimestamp = metav1.NewTime(w.now)
		p.Status.Phase = corev1.PodPending
		w.store[p.Name] = p
		w.emit(Added, p)
	}
	for _, name := range plan.Delete {
		p, ok := w.store[name]
		if !ok || w.rng.IntN(20) == 0 {
			w.exp = w.exp.Observe(Event{DeleteFailed, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}})
			continue
		}
		if p.Spec.NodeName == "" {
			delete(w.store, name)
			w.emit(Deleted, p)
			continue
		}
		p = p.DeepCopy()
		ts := metav1.NewTime(w.now)
		p.DeletionTimestamp = &ts
		w.store[name] = p
		w.emit(Modified, p)
	}
	return len(plan.Create)+len(plan.Delete)+len(plan.Adopt)+len(plan.Release) > 0
}

// disturb makes the cluster do something on its own.
func (w *world) disturb() {
	var names []string
	for n := range w.store {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return
	}
	p := w.store[names[w.rng.IntN(len(names))]].DeepCopy()
	if !isActive(p) {
		if p.DeletionTimestamp != nil { // terminating pods go away in time
			delete(w.store, p.Name)
			w.emit(Deleted, p)
		}
		return
	}
	switch w.rng.IntN(5) {
	case 0: // the pod fails
		p.Status.Phase = corev1.PodFailed
	case 1: // scheduled and running
		p.Spec.NodeName = "node-1"
		p.Status.Phase = corev1.PodRunning
	case 2: // a terminating (or any) pod goes away
		delete(w.store, p.Name)
		w.emit(Deleted, p)
		return
	case 3: // becomes ready
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(w.now)}}
	case 4:
		if !w.scaling {
			return
		}
		r := int32(w.rng.IntN(8))
		w.rc.Spec.Replicas = &r
		return
	}
	w.store[p.Name] = p
	w.emit(Modified, p)
}

// settle lets every event arrive and every terminating pod go, syncing until quiet.
func (w *world) settle() {
	for range 100 {
		for len(w.events) > 0 {
			w.deliver()
		}
		for n, p := range w.store {
			if p.DeletionTimestamp != nil {
				delete(w.store, n)
				w.emit(Deleted, p)
			}
		}
		for len(w.events) > 0 {
			w.deliver()
		}
		if !w.sync() && len(w.events) == 0 {
			return
		}
	}
	w.t.Fatal("did not settle")
}

// TestPropertyNoDoubleCreate: with a fixed replica count, however events lag and
// interleave (and creates or deletes fail), the store never holds more active pods
// created by the RC than replicas (adopted orphans aside, which it scales down), Decide never writes while expectations are pending, and
// after settling exactly replicas are active.
func TestPropertyNoDoubleCreate(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := newWorld(t, seed, int32(1+seed%6), false)
			want := int(*w.rc.Spec.Replicas)
			for range 300 {
				switch r := w.rng.IntN(10); {
				case r < 4 && len(w.events) > 0:
					w.deliver()
				case r < 7:
					w.sync()
				default:
					w.disturb()
				}
				w.now = w.now.Add(time.Duration(w.rng.IntN(500)) * time.Millisecond)
				if n := w.active(true); n > want {
					t.Fatalf("%d active pods created by the RC in the store, replicas %d", n, want)
				}
			}
			w.settle()
			if n := w.activeOwned(); n != want {
				t.Fatalf("after settling %d active pods, want %d", n, want)
			}
		})
	}
}

// TestPropertySettlesWhileScaling: with replicas changing under it, the RC still ends
// with exactly replicas active pods once events stop.
func TestPropertySettlesWhileScaling(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := newWorld(t, seed, 3, true)
			for range 300 {
				switch r := w.rng.IntN(10); {
				case r < 4 && len(w.events) > 0:
					w.deliver()
				case r < 7:
					w.sync()
				default:
					w.disturb()
				}
				w.now = w.now.Add(time.Duration(w.rng.IntN(500)) * time.Millisecond)
			}
			w.settle()
			if n, want := w.activeOwned(), int(*w.rc.Spec.Replicas); n != want {
				t.Fatalf("after settling %d active pods, want %d", n, want)
			}
		})
	}
}
