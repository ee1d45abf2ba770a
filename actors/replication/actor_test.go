package replication

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/control"
)

// fakeEffects answers what a controller asks of its actor's bookkeeping; any other
// call panics (the embedded nil interface), so a test sees what it touched.
type fakeEffects struct {
	control.Effects
	outstanding int
}

func (f fakeEffects) Outstanding() int { return f.outstanding }

// TestResyncLater: a resync from the pod feed waits while the RC awaits the answers
// to its writes with expectations pending (the last answer settles it), and is then
// owed; otherwise it is queued at once.
func TestResyncLater(t *testing.T) {
	for _, tt := range []struct {
		name        string
		outstanding int
		creates     []string
		later       bool
	}{
		{"creates answered one by one", 3, []string{"web-a", "web-b", "web-c"}, true},
		{"nothing awaited", 0, nil, false},
		{"only an owner patch awaited", 1, nil, false},
		{"an answer lost: nothing outstanding", 0, []string{"web-a"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Controller{exp: Expectations{Creates: tt.creates, Set: time.Now()}}
			if got := c.ResyncLater(fakeEffects{outstanding: tt.outstanding}); got != tt.later {
				t.Fatalf("resync later = %v, want %v", got, tt.later)
			}
			if c.owed != tt.later {
				t.Fatalf("owed = %v, want %v", c.owed, tt.later)
			}
		})
	}
}

// recordingEffects records the syncs a controller asks for.
type recordingEffects struct {
	control.Effects
	now        time.Time
	rev        int64
	queued     int
	syncAt     []time.Time
	recorded   []string
	rc         *corev1.ReplicationController
	discardLog logrus.FieldLogger
	local      map[string]runtime.Object // the replica's store, by pod name
}

func (f *recordingEffects) Now() time.Time         { return f.now }
func (f *recordingEffects) Revision() int64        { return f.rev }
func (f *recordingEffects) Outstanding() int       { return 0 }
func (f *recordingEffects) Object() runtime.Object { return f.rc }
func (f *recordingEffects) QueueSync()             { f.queued++ }
func (f *recordingEffects) Get(r control.Ref) runtime.Object {
	if o, ok := f.local[r.Name]; ok {
		return o
	}
	return nil
}
func (f *recordingEffects) SyncAt(t time.Time)      { f.syncAt = append(f.syncAt, t) }
func (f *recordingEffects) Log() logrus.FieldLogger { return f.discardLog }
func (f *recordingEffects) Record(_ runtime.Object, _, reason, _ string) {
	f.recorded = append(f.recorded, reason)
}

// TestRefusedCreatesBackOff: a refused pod create (a quota, a terminating namespace)
// makes the RC sync again after RetryAfter, doubling while the refusals go on, not
// at once; a create that succeeds ends the back-off.
func TestRefusedCreatesBackOff(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fx := &recordingEffects{now: now, rev: 7, rc: newRC("web", 3).obj(), discardLog: log,
		local: map[string]runtime.Object{"web-c": &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-c", Namespace: "default"}}}}
	c := &Controller{synced: 7, exp: Expectations{Creates: []string{"web-a", "web-b"}, Set: now}, sent: map[string]string{"web-a": opCreate, "web-b": opCreate}}
	refused := control.Answer{Ref: podRef("default", "web-a"), Err: errors.New("forbidden: Limited to 2 pods")}
	c.Answered(fx, refused)
	c.Settle(fx)
	if fx.queued != 0 || len(fx.syncAt) != 1 || !fx.syncAt[0].Equal(now.Add(time.Second)) {
		t.Fatalf("after one refusal: %d queued syncs, syncs at %v; want none queued and one at +1s", fx.queued, fx.syncAt)
	}
	c.send("web-b", opCreate)
	c.Answered(fx, control.Answer{Ref: podRef("default", "web-b"), Err: errors.New("forbidden")})
	c.Settle(fx)
	if len(fx.syncAt) != 2 || !fx.syncAt[1].Equal(now.Add(2*time.Second)) {
		t.Fatalf("after two refusals: syncs at %v, want the second at +2s", fx.syncAt)
	}
	if !slices.Equal(fx.recorded, []string{"FailedCreate", "FailedCreate"}) {
		t.Errorf("events %v", fx.recorded)
	}
	c.send("web-c", opCreate)
	c.exp = Expectations{Creates: []string{"web-c"}, Set: now}
	c.Answered(fx, control.Answer{Ref: podRef("default", "web-c"), Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-c", Namespace: "default"}}})
	if c.refusals != 0 {
		t.Fatalf("refusals %d after a create succeeded", c.refusals)
	}
}

// TestAnswerBeforeLocalStore: on a replica that is not the leader the answer to a pod
// write can come before the replica's own store has it; the expectation is then left
// to the pod feed, so the next sync (reading that store) does not write again.
func TestAnswerBeforeLocalStore(t *testing.T) {
	now := time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "default"}}
	terminating := pod.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: now}
	tests := []struct {
		name    string
		op      string
		answer  control.Answer
		local   runtime.Object // the replica's store's pod, nil when absent
		pending int            // expectations left
	}{
		{"create, in the local store", opCreate, control.Answer{Object: pod}, pod, 0},
		{"create, not yet in the local store", opCreate, control.Answer{Object: pod}, nil, 1},
		{"delete, gone here too", opDelete, control.Answer{Object: pod, Gone: true}, nil, 0},
		{"delete, still here", opDelete, control.Answer{Object: pod, Gone: true}, pod, 1},
		{"graceful delete, terminating here", opDelete, control.Answer{Object: terminating}, terminating, 0},
		{"graceful delete, not yet terminating here", opDelete, control.Answer{Object: terminating}, pod, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := logrus.New()
			log.SetOutput(io.Discard)
			fx := &recordingEffects{now: now, rc: newRC("web", 3).obj(), discardLog: log, local: map[string]runtime.Object{}}
			if tt.local != nil {
				fx.local["web-a"] = tt.local
			}
			c := &Controller{}
			c.send("web-a", tt.op)
			if tt.op == opCreate {
				c.exp = Expectations{Creates: []string{"web-a"}, Set: now}
			} else {
				c.exp = Expectations{Deletes: []string{"web-a"}, Set: now}
			}
			tt.answer.Ref = podRef("default", "web-a")
			c.Answered(fx, tt.answer)
			if got := c.exp.Pending(); got != tt.pending {
				t.Errorf("%d expectations pending, want %d", got, tt.pending)
			}
		})
	}
}

func TestPropagation(t *testing.T) {
	tests := []struct {
		asked     string
		want      metav1.DeletionPropagation
		wantHold  bool
		finalizer string
	}{
		{"", metav1.DeletePropagationOrphan, true, FinalizerOrphan},
		{"Orphan", metav1.DeletePropagationOrphan, true, FinalizerOrphan},
		{"Foreground", metav1.DeletePropagationForeground, true, FinalizerForeground},
		{"Background", metav1.DeletePropagationBackground, false, ""},
	}
	for _, tc := range tests {
		t.Run("asked "+tc.asked, func(t *testing.T) {
			if got := Propagation(tc.asked); got != tc.want {
				t.Fatalf("Propagation(%q) = %q, want %q", tc.asked, got, tc.want)
			}
			c := &Controller{}
			rc := newRC("web", 2).obj()
			if _, hold := c.Deletion(rc, nil, tc.asked); hold != tc.wantHold {
				t.Fatalf("hold = %v, want %v", hold, tc.wantHold)
			}
			if tc.wantHold {
				c.Terminate(rc, tc.asked)
				if !slices.Equal(rc.Finalizers, []string{tc.finalizer}) {
					t.Fatalf("finalizers %v, want %v", rc.Finalizers, tc.finalizer)
				}
			}
		})
	}
}

// notingEffects is recordingEffects with a store of no pods, a status writer and the
// numbers a sync notes on its span.
type notingEffects struct {
	recordingEffects
	notes map[string]int
}

func (f *notingEffects) Related(string, string, types.UID, string, func(runtime.Object) bool) {}
func (f *notingEffects) Changed(string) int64                                                 { return 0 }
func (f *notingEffects) Write(next runtime.Object) error                                      { return nil }
func (f *notingEffects) Note(key string, value int)                                           { f.notes[key] = value }
func (f *notingEffects) Trace() string                                                        { return "" }

// TestSyncNotesExpectations: a sync held back by writes it asked for and has not seen
// says so on its span (explain shows it); a sync with nothing pending notes nothing.
func TestSyncNotesExpectations(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		exp  Expectations
		want map[string]int
	}{
		{"creates pending", Expectations{Creates: []string{"web-a", "web-b"}, Set: now}, map[string]int{"waiting.creates": 2}},
		{"a delete seen done", Expectations{Deletes: []string{"web-c"}, Set: now}, map[string]int{}},
		{"nothing pending", Expectations{}, map[string]int{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := &notingEffects{recordingEffects: recordingEffects{now: now, rev: 7, rc: newRC("web", 0).obj(), discardLog: log}, notes: map[string]int{}}
			c := &Controller{exp: tt.exp}
			c.Sync(fx)
			if fmt.Sprint(fx.notes) != fmt.Sprint(tt.want) {
				t.Errorf("notes %v, want %v", fx.notes, tt.want)
			}
		})
	}
}

// storeEffects is notingEffects over a store of pods: it counts the reads of the
// pods and answers Changed with a revision the test moves.
type storeEffects struct {
	notingEffects
	pods    []*corev1.Pod
	changed int64
	reads   int
}

func (f *storeEffects) Related(_, _ string, _ types.UID, _ string, fn func(runtime.Object) bool) {
	f.reads++
	for _, p := range f.pods {
		if !fn(p) {
			return
		}
	}
}
func (f *storeEffects) Changed(string) int64 { return f.changed }

// TestSyncSkipsWhatCannotHaveChanged: once a sync was settled, a later sync reads the
// pods again only when the RC or some pod changed since (or the last plan was not
// settled); otherwise it only re-arms the periodic resync.
func TestSyncSkipsWhatCannotHaveChanged(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	for _, tt := range []struct {
		name      string
		minReady  int32
		change    func(f *storeEffects)
		wantReads int
	}{
		{"nothing changed", 0, func(*storeEffects) {}, 1},
		{"a pod changed", 0, func(f *storeEffects) { f.changed++ }, 2},
		{"the RC changed", 0, func(f *storeEffects) { f.rev++ }, 2},
		{"a pod becomes available later: not settled", 3600 * 2, func(*storeEffects) {}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := newRC("web", 2).minReady(tt.minReady).obj()
			pods := []*corev1.Pod{newPod("web-a", rc).obj(), newPod("web-b", rc).obj()}
			rc.Status = Decide(rc, pods, Expectations{}, counter(), now).Status // as the last sync wrote it
			fx := &storeEffects{notingEffects: notingEffects{
				recordingEffects: recordingEffects{now: now, rev: 7, rc: rc, discardLog: log}, notes: map[string]int{}},
				pods: pods, changed: 5}
			c := &Controller{}
			c.Sync(fx)
			tt.change(fx)
			fx.now = now.Add(ResyncPeriod)
			c.Sync(fx)
			if fx.reads != tt.wantReads {
				t.Errorf("pods read %d times, want %d", fx.reads, tt.wantReads)
			}
			if last := fx.syncAt[len(fx.syncAt)-1]; last.After(fx.now.Add(ResyncPeriod)) {
				t.Errorf("next sync at %v, later than a resync period after %v", last, fx.now)
			}
		})
	}
}

// TestSettled: only a plan that writes nothing, expects nothing and needs no timer is
// settled.
func TestSettled(t *testing.T) {
	rc := newRC("web", 1).obj()
	for _, tt := range []struct {
		name string
		plan Plan
		want bool
	}{
		{"empty", Plan{}, true},
		{"a create", Plan{Create: []*corev1.Pod{newPod("web-a", rc).obj()}}, false},
		{"a delete", Plan{Delete: []string{"web-a"}}, false},
		{"an adoption", Plan{Adopt: []PodPatch{{Name: "web-a"}}}, false},
		{"a release", Plan{Release: []PodPatch{{Name: "web-a"}}}, false},
		{"a status to write", Plan{StatusChanged: true}, false},
		{"expectations pending", Plan{Expectations: Expectations{Creates: []string{"web-a"}, Set: now}}, false},
		{"a timer", Plan{Requeue: now}, false},
		{"held back", Plan{Waiting: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Settled(tt.plan); got != tt.want {
				t.Errorf("Settled = %v, want %v", got, tt.want)
			}
		})
	}
}
