package replication

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func patchNames(ps []PodPatch) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestDecide(t *testing.T) {
	rc := newRC("web", 3).obj()
	tests := []struct {
		name        string
		rc          *corev1.ReplicationController
		pods        []*corev1.Pod
		exp         Expectations
		wantCreate  []string
		wantDelete  []string
		wantAdopt   []string
		wantRelease []string
		wantWaiting bool
		wantStatus  corev1.ReplicationControllerStatus
	}{
		{
			name:       "creates from nothing",
			rc:         rc,
			wantCreate: []string{"web-00000", "web-00001", "web-00002"},
			wantStatus: corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name:       "steady",
			rc:         rc,
			pods:       []*corev1.Pod{newPod("web-a", rc).obj(), newPod("web-b", rc).obj(), newPod("web-c", rc).obj()},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, ObservedGeneration: 1},
		},
		{
			name:       "replaces failed and succeeded, ignores terminating",
			rc:         rc,
			pods:       []*corev1.Pod{newPod("web-a", rc).obj(), newPod("web-b", rc).phase(corev1.PodFailed).obj(), newPod("web-c", rc).phase(corev1.PodSucceeded).obj(), newPod("web-d", rc).terminating().obj()},
			wantCreate: []string{"web-00000", "web-00001"},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1},
		},
		{
			name:       "skips names already taken",
			rc:         newRC("web", 2).obj(),
			pods:       []*corev1.Pod{newPod("web-00000", rc).phase(corev1.PodFailed).obj()},
			wantCreate: []string{"web-00001", "web-00002"},
			wantStatus: corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name: "skips names taken, whatever the pods' order",
			rc:   newRC("web", 2).obj(),
			pods: []*corev1.Pod{
				newPod("web-00001", rc).phase(corev1.PodFailed).obj(),
				newPod("web-00000", rc).phase(corev1.PodFailed).obj(),
			},
			wantCreate: []string{"web-00002", "web-00003"},
			wantStatus: corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name: "a name taken in another namespace is free here",
			rc:   newRC("web", 2).obj(),
			pods: []*corev1.Pod{
				newPod("web-00000", rc).phase(corev1.PodFailed).obj(),
				newPod("web-00001", rc).orphan().ns("other").obj(),
			},
			wantCreate: []string{"web-00001", "web-00002"},
			wantStatus: corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name:       "a pod with the selector's labels but not all the template's is not fully labelled",
			rc:         newRC("web", 1).obj(),
			pods:       []*corev1.Pod{newPod("web-a", rc).labels(map[string]string{"app": "web"}).obj()},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 0, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1},
		},
		{
			name:       "template labels equal to the selector: every matching pod is fully labelled",
			rc:         newRC("web", 1).templateLabels(map[string]string{"app": "web"}).obj(),
			pods:       []*corev1.Pod{newPod("web-a", rc).labels(map[string]string{"app": "web", "extra": "x"}).obj()},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1},
		},
		{
			name: "adopts orphans (the Cassandra example), not pods of another controller",
			rc:   rc,
			pods: []*corev1.Pod{
				newPod("cassandra-1", rc).orphan().obj(),
				newPod("cassandra-2", rc).orphan().obj(),
				newPod("theirs", rc).ownedBy("uid-other", true).obj(),
				newPod("terminating-orphan", rc).orphan().terminating().obj(),
			},
			wantAdopt:  []string{"cassandra-1", "cassandra-2"},
			wantCreate: []string{"web-00000"},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, ObservedGeneration: 1},
		},
		{
			name:       "a non-controller owner does not prevent adoption",
			rc:         newRC("web", 1).obj(),
			pods:       []*corev1.Pod{newPod("web-a", rc).ownedBy("uid-other", false).obj()},
			wantAdopt:  []string{"web-a"},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1},
		},
		{
			name:        "releases relabelled pods and replaces them",
			rc:          newRC("web", 2).obj(),
			pods:        []*corev1.Pod{newPod("web-a", rc).obj(), newPod("web-debug", rc).labels(map[string]string{"app": "debug"}).obj()},
			wantRelease: []string{"web-debug"},
			wantCreate:  []string{"web-00000"},
			wantStatus:  corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1},
		},
		{
			name:       "ignores other namespaces",
			rc:         newRC("web", 1).obj(),
			pods:       []*corev1.Pod{newPod("web-a", rc).orphan().ns("other").obj()},
			wantCreate: []string{"web-00000"},
			wantStatus: corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name: "scales down the least valuable first",
			rc:   newRC("web", 1).obj(),
			pods: []*corev1.Pod{
				newPod("running-ready-old", rc).obj(),
				newPod("running-ready-new", rc).readySince(now.Add(-time.Minute)).obj(),
				newPod("running-notready", rc).notReady().obj(),
				newPod("unknown", rc).phase(corev1.PodUnknown).obj(),
				newPod("pending", rc).phase(corev1.PodPending).obj(),
				newPod("unscheduled", rc).unscheduled().phase(corev1.PodPending).obj(),
			},
			wantDelete: []string{"unscheduled", "pending", "unknown", "running-notready", "running-ready-new"},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 6, FullyLabeledReplicas: 6, ReadyReplicas: 5, AvailableReplicas: 5, ObservedGeneration: 1},
		},
		{
			name: "then more restarts, then newer",
			rc:   newRC("web", 1).obj(),
			pods: []*corev1.Pod{
				newPod("old", rc).created(now.Add(-2 * time.Hour)).notReady().obj(),
				newPod("new", rc).created(now.Add(-time.Minute)).notReady().obj(),
				newPod("restarty", rc).created(now.Add(-3 * time.Hour)).notReady().restarts(4).obj(),
			},
			wantDelete: []string{"restarty", "new"},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 3, FullyLabeledReplicas: 3, ObservedGeneration: 1},
		},
		{
			name:        "pending expectations hold creates back",
			rc:          rc,
			exp:         Expectations{Creates: []string{"web-x"}, Set: now.Add(-time.Minute)},
			wantWaiting: true,
			wantStatus:  corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name:        "pending expectations hold deletes back",
			rc:          newRC("web", 0).obj(),
			pods:        []*corev1.Pod{newPod("web-a", rc).obj()},
			exp:         Expectations{Deletes: []string{"web-z"}, Set: now.Add(-time.Minute)},
			wantWaiting: true,
			wantStatus:  corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1},
		},
		{
			name:       "expired expectations let the sync go on",
			rc:         newRC("web", 1).obj(),
			exp:        Expectations{Creates: []string{"web-x"}, Set: now.Add(-ExpectationsTimeout)},
			wantCreate: []string{"web-00000"},
			wantStatus: corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name:       "a terminating RC creates and adopts nothing",
			rc:         newRC("web", 3).deleting().obj(),
			pods:       []*corev1.Pod{newPod("orphan", rc).orphan().obj()},
			wantStatus: corev1.ReplicationControllerStatus{ObservedGeneration: 1},
		},
		{
			name:       "fully labelled and available counts",
			rc:         newRC("web", 3).minReady(60).obj(),
			pods:       []*corev1.Pod{newPod("a", rc).labels(map[string]string{"app": "web"}).obj(), newPod("b", rc).readySince(now.Add(-10 * time.Second)).obj(), newPod("c", rc).notReady().obj()},
			wantStatus: corev1.ReplicationControllerStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := Decide(tc.rc, tc.pods, tc.exp, counter(), now)
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("create", names(plan.Create), tc.wantCreate)
			check("delete", plan.Delete, tc.wantDelete)
			check("adopt", patchNames(plan.Adopt), tc.wantAdopt)
			check("release", patchNames(plan.Release), tc.wantRelease)
			if plan.Waiting != tc.wantWaiting {
				t.Errorf("waiting = %v, want %v", plan.Waiting, tc.wantWaiting)
			}
			if !equality.Semantic.DeepEqual(plan.Status, tc.wantStatus) {
				t.Errorf("status = %+v, want %+v", plan.Status, tc.wantStatus)
			}
			if plan.StatusChanged != !equality.Semantic.DeepEqual(tc.rc.Status, tc.wantStatus) {
				t.Errorf("statusChanged = %v", plan.StatusChanged)
			}
			if n := len(plan.Create) + len(plan.Delete); n > 0 {
				if got := plan.Expectations.Pending(); got != n {
					t.Errorf("expectations pending %d, want %d", got, n)
				}
				if !plan.Requeue.Equal(now.Add(ExpectationsTimeout)) {
					t.Errorf("requeue %v, want expiry", plan.Requeue)
				}
			}
		})
	}
}

func TestNewPod(t *testing.T) {
	rc := newRC("web", 1).obj()
	p := NewPod(rc, "web-abcde")
	ref := metav1.GetControllerOf(p)
	switch {
	case ref == nil || ref.UID != rc.UID || ref.Kind != "ReplicationController" || ref.APIVersion != "v1" || ref.Name != "web":
		t.Fatalf("controller ref = %+v", ref)
	case ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion:
		t.Fatalf("blockOwnerDeletion not set")
	case p.Labels["tier"] != "web" || p.Annotations["a"] != "b" || p.Namespace != "default" || p.Spec.Containers[0].Image != "nginx":
		t.Fatalf("pod not from template: %+v", p)
	}
	p.Labels["x"] = "y"
	p.Spec.Containers[0].Image = "changed"
	if _, ok := rc.Spec.Template.Labels["x"]; ok || rc.Spec.Template.Spec.Containers[0].Image != "nginx" {
		t.Fatal("pod shares memory with the template")
	}
}

func TestBurst(t *testing.T) {
	rc := newRC("web", 2000).obj()
	plan := Decide(rc, nil, Expectations{}, counter(), now)
	if len(plan.Create) != BurstReplicas {
		t.Fatalf("created %d, want %d", len(plan.Create), BurstReplicas)
	}
	var pods []*corev1.Pod
	for i := range 1200 {
		pods = append(pods, newPod(string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), rc).obj())
	}
	plan = Decide(newRC("web", 0).obj(), pods, Expectations{}, counter(), now)
	if len(plan.Delete) != BurstReplicas {
		t.Fatalf("deleted %d, want %d", len(plan.Delete), BurstReplicas)
	}
}

func TestNameCollisions(t *testing.T) {
	rc := newRC("web", 2).obj()
	same := func() string { return "aaaaa" }
	plan := Decide(rc, nil, Expectations{}, same, now)
	if got := names(plan.Create); !slices.Equal(got, []string{"web-aaaaa"}) {
		t.Fatalf("create = %v: a generator that repeats must not yield duplicates", got)
	}
}

func TestPatches(t *testing.T) {
	rc := newRC("web", 1).obj()
	plan := Decide(rc, []*corev1.Pod{newPod("p", rc).orphan().obj(), newPod("q", rc).labels(nil).obj()}, Expectations{}, counter(), now)
	var adopt struct {
		Metadata struct {
			UID             types.UID               `json:"uid"`
			OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(plan.Adopt[0].Patch, &adopt); err != nil {
		t.Fatal(err)
	}
	if adopt.Metadata.UID != "uid-p" || len(adopt.Metadata.OwnerReferences) != 1 || adopt.Metadata.OwnerReferences[0].UID != rc.UID || !*adopt.Metadata.OwnerReferences[0].Controller {
		t.Fatalf("adopt patch = %s", plan.Adopt[0].Patch)
	}
	if got, want := string(plan.Release[0].Patch), `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"uid-web"}],"uid":"uid-q"}}`; got != want {
		t.Fatalf("release patch = %s, want %s", got, want)
	}
}

func TestExpectationsObserve(t *testing.T) {
	start := Expectations{Creates: []string{"a", "b"}, Deletes: []string{"x", "y"}, Set: now}
	pod := func(name string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	term := pod("x")
	ts := metav1.NewTime(now)
	term.DeletionTimestamp = &ts
	tests := []struct {
		name        string
		events      []Event
		wantCreates []string
		wantDeletes []string
		wantZero    bool
	}{
		{name: "add seen", events: []Event{{Added, pod("a")}}, wantCreates: []string{"b"}, wantDeletes: []string{"x", "y"}},
		{name: "unknown add ignored", events: []Event{{Added, pod("z")}}, wantCreates: []string{"a", "b"}, wantDeletes: []string{"x", "y"}},
		{name: "create failed", events: []Event{{CreateFailed, pod("b")}}, wantCreates: []string{"a"}, wantDeletes: []string{"x", "y"}},
		{name: "delete seen", events: []Event{{Deleted, pod("y")}}, wantCreates: []string{"a", "b"}, wantDeletes: []string{"x"}},
		{name: "terminating counts as deleted", events: []Event{{Modified, term}}, wantCreates: []string{"a", "b"}, wantDeletes: []string{"y"}},
		{name: "delete failed", events: []Event{{DeleteFailed, pod("x")}}, wantCreates: []string{"a", "b"}, wantDeletes: []string{"y"}},
		{name: "modified without deletion keeps the delete", events: []Event{{Modified, pod("x")}}, wantCreates: []string{"a", "b"}, wantDeletes: []string{"x", "y"}},
		{name: "all seen", events: []Event{{Added, pod("a")}, {Added, pod("b")}, {Deleted, pod("x")}, {Deleted, pod("y")}}, wantZero: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := start
			for _, ev := range tc.events {
				e = e.Observe(ev)
			}
			if tc.wantZero {
				if e.Pending() != 0 || !e.Set.IsZero() || !e.Satisfied(now) {
					t.Fatalf("got %+v, want zero", e)
				}
				return
			}
			if !slices.Equal(e.Creates, tc.wantCreates) || !slices.Equal(e.Deletes, tc.wantDeletes) {
				t.Fatalf("got %+v", e)
			}
			if e.Satisfied(now) || e.Satisfied(now.Add(ExpectationsTimeout-time.Second)) || !e.Satisfied(now.Add(ExpectationsTimeout)) {
				t.Fatal("satisfied before expiry or not after")
			}
			if !slices.Equal(start.Creates, []string{"a", "b"}) || !slices.Equal(start.Deletes, []string{"x", "y"}) {
				t.Fatal("Observe modified its receiver")
			}
		})
	}
}

func TestRequeueForMinReady(t *testing.T) {
	rc := newRC("web", 1).minReady(30).obj()
	plan := Decide(rc, []*corev1.Pod{newPod("a", rc).readySince(now.Add(-10 * time.Second)).obj()}, Expectations{}, counter(), now)
	if want := now.Add(20 * time.Second); !plan.Requeue.Equal(want) {
		t.Fatalf("requeue = %v, want %v", plan.Requeue, want)
	}
}

func TestDependentsToDelete(t *testing.T) {
	rc := newRC("web", 2).obj()
	pods := []*corev1.Pod{
		newPod("mine", rc).obj(),
		newPod("mine-terminating", rc).terminating().obj(),
		newPod("orphan", rc).orphan().obj(),
		newPod("theirs", rc).ownedBy("uid-other", true).obj(),
	}
	tests := []struct {
		name       string
		policy     metav1.DeletionPropagation
		wantOrphan []string
		wantDelete []string
		pods       []*corev1.Pod // nil: pods
		wantDone   bool
	}{
		{name: "orphan", policy: metav1.DeletePropagationOrphan, wantOrphan: []string{"mine", "mine-terminating"}},
		{name: "background", policy: metav1.DeletePropagationBackground, wantDelete: []string{"mine"}},
		{name: "foreground", policy: metav1.DeletePropagationForeground, wantDelete: []string{"mine"}},
		{name: "default", wantDelete: []string{"mine"}},
		{name: "only a terminating pod left", policy: metav1.DeletePropagationForeground, pods: pods[1:]},
		{name: "none of its pods left", policy: metav1.DeletePropagationForeground, pods: pods[2:], wantDone: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := pods
			if tc.pods != nil {
				in = tc.pods
			}
			d := DependentsToDelete(rc, in, tc.policy)
			if d.Done() != tc.wantDone {
				t.Errorf("done = %v, want %v (owned %d)", d.Done(), tc.wantDone, d.Owned)
			}
			if got := patchNames(d.Orphan); !slices.Equal(got, tc.wantOrphan) {
				t.Errorf("orphan = %v, want %v", got, tc.wantOrphan)
			}
			if !slices.Equal(d.Delete, tc.wantDelete) {
				t.Errorf("delete = %v, want %v", d.Delete, tc.wantDelete)
			}
		})
	}
}

func TestExpectationsObserveState(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	terminating := metav1.NewTime(now)
	pod := func(name string, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if deleting {
			p.DeletionTimestamp = &terminating
		}
		return p
	}
	exp := Expectations{Creates: []string{"a", "b"}, Deletes: []string{"c", "d", "e"}, Set: now}
	tests := []struct {
		name        string
		pods        []*corev1.Pod
		wantCreates []string
		wantDeletes []string
	}{
		{"nothing observed yet", []*corev1.Pod{pod("c", false), pod("d", false), pod("e", false)}, []string{"a", "b"}, []string{"c", "d", "e"}},
		{"created pods appear", []*corev1.Pod{pod("a", false), pod("c", false), pod("d", false), pod("e", false)}, []string{"b"}, []string{"c", "d", "e"}},
		{"deleted pods gone or terminating", []*corev1.Pod{pod("c", true), pod("e", false)}, []string{"a", "b"}, []string{"e"}},
		{"everything observed", []*corev1.Pod{pod("a", false), pod("b", false), pod("e", true)}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := exp.ObserveState(tt.pods)
			if !slices.Equal(got.Creates, tt.wantCreates) || !slices.Equal(got.Deletes, tt.wantDeletes) {
				t.Fatalf("ObserveState = creates %v deletes %v, want %v %v", got.Creates, got.Deletes, tt.wantCreates, tt.wantDeletes)
			}
			if got.Pending() == 0 && !got.Set.IsZero() {
				t.Fatalf("satisfied expectations keep their time: %+v", got)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		refusals int
		want     time.Duration
	}{{0, 0}, {1, time.Second}, {2, 2 * time.Second}, {5, 16 * time.Second}, {6, ResyncPeriod}, {100, ResyncPeriod}}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.refusals), func(t *testing.T) {
			if got := RetryAfter(tc.refusals); got != tc.want {
				t.Fatalf("RetryAfter(%d) = %v, want %v", tc.refusals, got, tc.want)
			}
		})
	}
}
