package namespace

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
)

// RecheckInterval is how long a terminating namespace waits for contents that are
// themselves terminating before looking again.
const RecheckInterval = time.Second

// Controller is a namespace's controller (control.Controller): it drives a
// terminating namespace. It deletes the namespace's contents through their own
// actors (with their default grace), waits for the answers, looks again while some
// remain, then removes the namespace.
type Controller struct {
	control.Base
	swept bool // deletes were sent since the last recheck
}

var (
	_ control.Controller = (*Controller)(nil)
	_ control.Deleter    = (*Controller)(nil)
	_ control.Holder     = (*Controller)(nil)
)

// NewController returns the controller of one namespace.
func NewController() control.Controller { return &Controller{} }

// HoldsDeleted: a deleted namespace stays until its contents are gone.
func (c *Controller) HoldsDeleted() bool { return true }

// Deletion holds the namespace, at once.
func (c *Controller) Deletion(runtime.Object, *int64, string) (int64, bool) { return 0, true }

// Terminate marks the namespace Terminating.
func (c *Controller) Terminate(obj runtime.Object, _ string) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		Terminate(ns)
	}
}

// Sync is the recheck: the contents are looked at again.
func (c *Controller) Sync(control.Effects) { c.swept = false }

// Settle takes the next step of termination.
func (c *Controller) Settle(fx control.Effects) {
	ns, ok := fx.Object().(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp == nil || fx.Outstanding() > 0 {
		return
	}
	contents, current := fx.Contents(ns.Name)
	if !current { // the view may miss contents: look again later
		fx.SyncAt(fx.Now().Add(RecheckInterval))
		return
	}
	switch Decide(ns, len(contents), fx.Outstanding(), c.swept) {
	case DeleteContents:
		for _, r := range contents {
			fx.Delete(r, false)
		}
		c.swept = true
	case Recheck:
		fx.SyncAt(fx.Now().Add(RecheckInterval))
	case Finalize:
		next := ns.DeepCopy()
		next.Spec.Finalizers = nil
		if err := fx.Write(next); err != nil {
			fx.Log().WithField("error", err).Error("write own status")
		}
		fx.QueueSync() // then remove it
	case Remove:
		if err := fx.Remove(); err != nil {
			fx.Log().WithField("error", err).Error("remove namespace")
			fx.SyncAt(fx.Now().Add(RecheckInterval))
		}
	case Idle:
	}
}
