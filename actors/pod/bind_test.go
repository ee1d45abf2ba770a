package pod

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBind(t *testing.T) {
	t0 := time.Date(2015, 7, 21, 0, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	pod := func(mod func(p *corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"}}
		if mod != nil {
			mod(p)
		}
		return p
	}
	binding := func(node string, ann map[string]string) *corev1.Binding {
		return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: ann},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	}
	scheduled := func(at time.Time) []corev1.PodCondition {
		return []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
	}
	tests := []struct {
		name    string
		cur     *corev1.Pod
		b       *corev1.Binding
		want    *corev1.Pod
		invalid bool
		message string // of the conflict
	}{
		{
			name: "binds and sets PodScheduled",
			cur:  pod(nil),
			b:    binding("n1", nil),
			want: pod(func(p *corev1.Pod) { p.Spec.NodeName = "n1"; p.Status.Conditions = scheduled(now) }),
		},
		{
			name: "merges annotations, the binding's win",
			cur:  pod(func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "pod", "b": "pod"} }),
			b:    binding("n1", map[string]string{"b": "binding", "c": "binding"}),
			want: pod(func(p *corev1.Pod) {
				p.Spec.NodeName = "n1"
				p.Annotations = map[string]string{"a": "pod", "b": "binding", "c": "binding"}
				p.Status.Conditions = scheduled(now)
			}),
		},
		{
			name: "a False PodScheduled becomes True now",
			cur: pod(func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: "Unschedulable", LastTransitionTime: metav1.NewTime(t0)}}
			}),
			b:    binding("n1", nil),
			want: pod(func(p *corev1.Pod) { p.Spec.NodeName = "n1"; p.Status.Conditions = scheduled(now) }),
		},
		{
			name: "a True PodScheduled keeps its transition time",
			cur:  pod(func(p *corev1.Pod) { p.Status.Conditions = scheduled(t0) }),
			b:    binding("n1", nil),
			want: pod(func(p *corev1.Pod) { p.Spec.NodeName = "n1"; p.Status.Conditions = scheduled(t0) }),
		},
		{
			name: "uid matches",
			cur:  pod(nil),
			b:    func() *corev1.Binding { b := binding("n1", nil); b.UID = "uid-web"; return b }(),
			want: pod(func(p *corev1.Pod) { p.Spec.NodeName = "n1"; p.Status.Conditions = scheduled(now) }),
		},
		{
			name:    "already bound",
			cur:     pod(func(p *corev1.Pod) { p.Spec.NodeName = "n1" }),
			b:       binding("n2", nil),
			message: `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"`,
		},
		{
			name:    "being deleted",
			cur:     pod(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }),
			b:       binding("n1", nil),
			message: `Operation cannot be fulfilled on pods/binding "web": pod web is being deleted, cannot be assigned to a host`,
		},
		{
			name:    "another pod's uid",
			cur:     pod(nil),
			b:       func() *corev1.Binding { b := binding("n1", nil); b.UID = "uid-old"; return b }(),
			message: `Operation cannot be fulfilled on pods/binding "web": the UID in the binding (uid-old) does not match the pod's (uid-web)`,
		},
		{
			name:    "no target",
			cur:     pod(nil),
			b:       binding("", nil),
			invalid: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cur.DeepCopy()
			got, err := Bind(tc.cur, tc.b, now)
			if !reflect.DeepEqual(tc.cur, before) {
				t.Fatalf("Bind modified its input: %+v", tc.cur)
			}
			switch {
			case tc.invalid:
				if !apierrors.IsInvalid(err) {
					t.Fatalf("err %v, want Invalid", err)
				}
			case tc.message != "":
				if !apierrors.IsConflict(err) || err.Error() != tc.message {
					t.Fatalf("err %v, want Conflict %q", err, tc.message)
				}
			case err != nil:
				t.Fatalf("Bind: %v", err)
			case !reflect.DeepEqual(got, tc.want):
				t.Fatalf("bound\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
