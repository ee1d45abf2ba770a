package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func TestPending(t *testing.T) {
	deleting := st.NewPod("web").Obj()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	other := st.NewPod("web").Obj()
	other.Spec.SchedulerName = "my-scheduler"
	named := st.NewPod("web").Obj()
	named.Spec.SchedulerName = corev1.DefaultSchedulerName
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{name: "unbound", pod: st.NewPod("web").Obj(), want: true},
		{name: "names the default scheduler", pod: named, want: true},
		{name: "bound", pod: st.NewPod("web").Node("n1").Obj()},
		{name: "being deleted", pod: deleting},
		{name: "succeeded", pod: st.NewPod("web").Phase(corev1.PodSucceeded).Obj()},
		{name: "failed", pod: st.NewPod("web").Phase(corev1.PodFailed).Obj()},
		{name: "another scheduler's", pod: other},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Pending(tc.pod); got != tc.want {
				t.Fatalf("Pending = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeChanged(t *testing.T) {
	base := func() *st.NodeBuilder { return st.NewNode("n1").CPU("2").Mem("4Gi").Labels("zone", "a") }
	heartbeat := base().Obj()
	heartbeat.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(t0)
	tests := []struct {
		name string
		node *corev1.Node
		want bool
	}{
		{name: "same", node: base().Obj()},
		{name: "heartbeat only", node: heartbeat},
		{name: "label changed", node: base().Labels("disk", "ssd").Obj(), want: true},
		{name: "capacity changed", node: base().CPU("4").Obj(), want: true},
		{name: "capacity written otherwise", node: base().CPU("2000m").Mem("4096Mi").Obj()},
		{name: "capacity removed", node: base().Pods(0).Obj(), want: true},
		{name: "allocatable empty, not nil", node: func() *corev1.Node {
			n := base().Obj()
			n.Status.Allocatable = corev1.ResourceList{}
			return n
		}()},
		{name: "allocatable changed", node: func() *corev1.Node {
			n := base().Obj()
			n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			return n
		}(), want: true},
		{name: "cordoned", node: base().Unschedulable().Obj(), want: true},
		{name: "not ready", node: base().NotReady().Obj(), want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NodeChanged(NewNodeInfo(base().Obj()), tc.node); got != tc.want {
				t.Fatalf("NodeChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
