package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func TestNewBinding(t *testing.T) {
	pod := st.NewPod("web").Obj()
	pod.UID = types.UID("uid-web")
	d := Decision{Pod: "default/web", Node: "n2", Nodes: 1, Feasible: 1}
	b := NewBinding(pod, d, nil)
	want := corev1.ObjectReference{Kind: "Node", Name: "n2"}
	if b.Name != "web" || b.Namespace != pod.Namespace || b.UID != pod.UID || b.Target != want {
		t.Fatalf("binding %+v", b)
	}
	if got := b.Annotations[DecisionAnnotation]; got != EncodeDecision(d, nil) {
		t.Fatalf("annotation %q", got)
	}
}
