package pod

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTerminatedToDelete(t *testing.T) {
	t0 := time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)
	pod := func(ns, name string, phase corev1.PodPhase, age int, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Minute))},
			Status: corev1.PodStatus{Phase: phase}}
		if deleting {
			p.DeletionTimestamp = &p.CreationTimestamp
		}
		return p
	}
	pods := []*corev1.Pod{
		pod("default", "run-new", corev1.PodRunning, 0, false),
		pod("default", "done-3", corev1.PodSucceeded, 3, false),
		pod("default", "failed-1", corev1.PodFailed, 1, false),
		pod("default", "pending-0", corev1.PodPending, -10, false),
		pod("b", "done-2", corev1.PodSucceeded, 2, false),
		pod("a", "done-2", corev1.PodSucceeded, 2, false),
		pod("default", "done-0", corev1.PodSucceeded, 0, true),
	}
	for _, tc := range []struct {
		name      string
		threshold int
		want      []string
	}{
		{"disabled", 0, nil},
		{"negative disables", -1, nil},
		{"under the threshold", 10, nil},
		{"exactly the threshold", 5, nil},
		{"one over: the oldest, but it is being deleted", 4, []string{}},
		{"two over", 3, []string{"default/failed-1"}},
		{"ties by namespace and name", 2, []string{"default/failed-1", "a/done-2"}},
		{"one kept: the newest", 1, []string{"default/failed-1", "a/done-2", "b/done-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range TerminatedToDelete(pods, tc.threshold) {
				got = append(got, p.Namespace+"/"+p.Name)
			}
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
