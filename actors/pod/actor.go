package pod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
)

// Controller is a pod's controller (control.Controller): the pod's own work is its
// agent's, so the control plane only decides how a delete proceeds (its grace).
type Controller struct{ control.Base }

var (
	_ control.Controller = Controller{}
	_ control.Deleter    = Controller{}
)

// NewController returns the controller of one pod.
func NewController() control.Controller { return Controller{} }

// Deletion gives the pod its grace period (Grace).
func (Controller) Deletion(obj runtime.Object, requested *int64, _ string) (int64, bool) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return 0, false
	}
	return Grace(p, requested), false
}

// Terminate leaves the marked pod as it is.
func (Controller) Terminate(runtime.Object, string) {}
