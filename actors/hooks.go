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
	// holdFor, when set, decides per delete whether the object is held (marked with
	// a deletionTimestamp) rather than removed at once.
	holdFor func(opts DeleteOptions) bool
	// terminate adjusts the (fresh) copy of an object being marked for deletion.
	terminate func(obj runtime.Object, opts DeleteOptions)
	// deleted runs after the object was removed at once, with its last state.
	deleted func(a *objectActor, ctx actorContext, last runtime.Object)
	// settle runs after every message while the object exists: the kind's own work.
	settle func(a *objectActor, ctx actorContext)
	// sync is the kind's controller: it compares what the object asks for with what
	// exists and sends the writes that close the gap. It runs on syncNow, which
	// resyncs and settle queue, never more than once per burst of messages.
	sync func(a *objectActor, ctx actorContext)
	// answered sees each answer to a write the actor asked of another actor.
	answered func(a *objectActor, r *reply)
	// resyncLater tells whether a resync from a feed may wait for the sync the
	// kind's own progress is about to queue (it then notes that one is owed).
	resyncLater func(a *objectActor) bool
}

var (
	genericHook = &hook{}
	podHook     = &hook{grace: podGrace}
	nsHook      = &hook{hold: true, terminate: terminateNamespace, settle: settleNamespace}
	rcHook      = &hook{holdFor: rcHolds, terminate: terminateRC, deleted: rcDeleted,
		settle: settleRC, sync: syncRC, answered: rcAnswered, resyncLater: rcResyncLater}
	nodeHook    = &hook{settle: settleNode, sync: syncNode, deleted: nodeDeleted}
	serviceHook = &hook{settle: settleService, sync: syncService, answered: serviceAnswered, deleted: serviceDeleted}
)

// hooks are the kinds whose object actors do more than the generic lifecycle; each
// must be a stored kind of the table (TestHooksNameStoredKinds).
var hooks = map[string]*hook{
	"pods": podHook, "namespaces": nsHook, "replicationcontrollers": rcHook,
	"nodes": nodeHook, "services": serviceHook, "events": eventHook,
}

func hookFor(resource string) *hook {
	if h, ok := hooks[resource]; ok {
		return h
	}
	return genericHook
}

func podGrace(obj runtime.Object, requested *int64) int64 {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return 0
	}
	return pod.Grace(p, requested)
}
