package replication

import (
	"cmp"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRelevantLeavesDecisionsAlone: an RC's actor lists only the pods Relevant to
// the RC; Decide, NewSlots, DependentsToDelete and ObserveState must come to the
// same answers as over every pod of the namespace.
func TestRelevantLeavesDecisionsAlone(t *testing.T) {
	web := newRC("web", 5).obj()
	other := newRC("db", 3).obj()
	otherPods := func() []*corev1.Pod {
		return []*corev1.Pod{
			newPod("db-aaaaa", other).obj(),
			newPod("db-bbbbb", other).labels(map[string]string{"app": "web"}).obj(), // matches web, controlled by db
			newPod("web-zzzzz", other).obj(),                                        // named like web's, controlled by db
			newPod("webx-ccccc", other).obj(),                                       // a prefix of the name, not web's
			newPod("x-1", web).ns("elsewhere").obj(),
		}
	}
	tests := []struct {
		name string
		rc   *corev1.ReplicationController
		pods []*corev1.Pod
		exp  Expectations
	}{
		{name: "scale up among others", rc: web, pods: []*corev1.Pod{newPod("web-00000", web).obj()}},
		{name: "adopt an orphan, skip a terminating one", rc: web, pods: []*corev1.Pod{
			newPod("hand-1", web).orphan().obj(), newPod("hand-2", web).orphan().terminating().obj(),
		}},
		{name: "release a pod that stopped matching", rc: web, pods: []*corev1.Pod{
			newPod("web-00001", web).labels(map[string]string{"app": "other"}).obj(),
		}},
		{name: "scale down", rc: newRC("web", 1).obj(), pods: []*corev1.Pod{
			newPod("web-00001", web).obj(), newPod("web-00002", web).obj(), newPod("web-00003", web).unscheduled().obj(),
		}},
		{name: "expectations met and pending", rc: web, pods: []*corev1.Pod{newPod("web-00001", web).obj()},
			exp: Expectations{Creates: []string{"web-00001", "web-00004"}, Deletes: []string{"web-00009"}, Set: now}},
		{name: "deleting", rc: newRC("web", 2).deleting().obj(), pods: []*corev1.Pod{
			newPod("web-00001", web).obj(), newPod("hand-1", web).orphan().obj(),
		}},
		{name: "non-controller owner reference", rc: web, pods: []*corev1.Pod{
			func() *corev1.Pod {
				p := newPod("db-ddddd", other).obj()
				no := false
				p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{Kind: "ReplicationController", Name: "web", UID: web.UID, Controller: &no})
				return p
			}(),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := append(otherPods(), tt.pods...)
			slices.SortFunc(all, func(a, b *corev1.Pod) int {
				if a.Namespace != b.Namespace {
					return cmp.Compare(a.Namespace, b.Namespace)
				}
				return cmp.Compare(a.Name, b.Name)
			})
			some := slices.DeleteFunc(slices.Clone(all), func(p *corev1.Pod) bool { return !Relevant(tt.rc, p) })
			if len(some) == len(all) {
				t.Fatalf("Relevant kept all %d pods: the case shows nothing", len(all))
			}
			at := now.Add(time.Minute)
			if got, want := Decide(tt.rc, some, tt.exp, counter(), at), Decide(tt.rc, all, tt.exp, counter(), at); !reflect.DeepEqual(got, want) {
				t.Errorf("Decide over the relevant pods:\n%+v\nover all:\n%+v", got, want)
			}
			s1, s2 := NewSlots(tt.rc, some, tt.exp, 0), NewSlots(tt.rc, all, tt.exp, 0)
			for range 8 {
				if a, b := s1.Suffix(), s2.Suffix(); a != b {
					t.Errorf("slots: %s over the relevant pods, %s over all", a, b)
				}
			}
			for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground} {
				if got, want := DependentsToDelete(tt.rc, some, policy), DependentsToDelete(tt.rc, all, policy); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: dependents %+v over the relevant pods, %+v over all", policy, got, want)
				}
			}
			if got, want := tt.exp.ObserveState(some), tt.exp.ObserveState(all); !reflect.DeepEqual(got, want) {
				t.Errorf("ObserveState: %+v over the relevant pods, %+v over all", got, want)
			}
		})
	}
}
