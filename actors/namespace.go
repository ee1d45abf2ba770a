package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/actors/namespace"
	"github.com/kubeactor/kubeactor/persistence"
)

// actorContext keeps hook signatures short.
type actorContext = actor.Context

// recheckInterval is how long a terminating namespace waits for contents that are
// themselves terminating before looking again.
const recheckInterval = time.Second

func terminateNamespace(obj runtime.Object, _ DeleteOptions) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		namespace.Terminate(ns)
	}
}

// settleNamespace drives a terminating namespace: delete its contents through their
// own actors (with their default grace), wait for the answers, recheck while some
// remain, then remove the namespace.
func settleNamespace(a *objectActor, ctx actorContext) {
	ns, ok := a.obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp == nil || a.outstanding > 0 {
		return
	}
	keys := a.env.contents(ns.Name)
	switch namespace.Decide(ns, len(keys), a.outstanding, a.swept) {
	case namespace.DeleteContents:
		for _, k := range keys {
			ctx.Request(a.env.managers[k.Resource], &deleteRequest{envelope: envelope{trace: a.cell.trace, key: k}})
		}
		a.outstanding, a.swept = len(keys), true
	case namespace.Recheck:
		a.schedule(ctx, recheckInterval, &recheck{})
	case namespace.Finalize:
		next := ns.DeepCopy()
		next.Spec.Finalizers = nil
		a.writeSelf(next)
		a.queueSync(ctx) // then remove it
	case namespace.Remove:
		a.stopTimer()
		if err := a.apply(a.cell.trace, lifecycle.Plan{Op: persistence.OpDelete, Gone: true}); err != nil {
			a.fields(a.cell.trace).WithField("error", err).Error("remove namespace")
			a.schedule(ctx, recheckInterval, &recheck{})
		}
	case namespace.Idle:
	}
}
