package actors

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/pod"
)

// hook is the kind-specific part of the object actor. The zero hook is the generic
// behaviour: a delete is immediate unless finalizers hold the object.
type hook struct {
	// grace returns a delete's grace period in seconds (nil: 0).
	grace func(obj runtime.Object, requested *int64) int64
	// hold keeps a deleted object until settle removes it.
	hold bool
	// terminate adjusts the (fresh) copy of an object being marked for deletion.
	terminate func(obj runtime.Object)
	// settle runs after every message while the object exists: the kind's own work.
	settle func(a *objectActor, ctx actorContext)
}

var (
	genericHook = &hook{}
	podHook     = &hook{grace: podGrace}
	nsHook      = &hook{hold: true, terminate: terminateNamespace, settle: settleNamespace}
)

func hookFor(resource string) *hook {
	switch resource {
	case "pods":
		return podHook
	case "namespaces":
		return nsHook
	default:
		return genericHook
	}
}

func podGrace(obj runtime.Object, requested *int64) int64 {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return 0
	}
	return pod.Grace(p, requested)
}
