package resourcequota

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
)

// DefaultSyncPeriod is how often a quota recounts its usage without any event
// (--resource-quota-sync-period, 10s in Kubernetes 1.0).
const DefaultSyncPeriod = 10 * time.Second

// Controller is a quota's controller (control.Controller). The quota's actor is the
// only writer of its status: it recounts status.used from the store on every sync
// (on a change of the objects it counts, routed by the feeds, and every sync
// period), and it charges creates one at a time (ChargeRequest, from the
// ResourceQuota admission plugin), writing the new usage before it answers. Usage it
// has charged but not yet seen in the store is kept in pending, so a recount never
// forgets a create in flight.
type Controller struct {
	control.Base
	period  time.Duration
	used    corev1.ResourceList // the usage as last counted and charged; nil before the first count
	pending []Charge
}

var (
	_ control.Controller = (*Controller)(nil)
	_ control.Receiver   = (*Controller)(nil)
)

// NewController returns the controller of one quota, recounting every period.
func NewController(period time.Duration) control.Controller {
	if period <= 0 {
		period = DefaultSyncPeriod
	}
	return &Controller{period: period}
}

// Settle syncs a quota whose usage was never counted or whose status.hard is not its
// spec.hard (it was just created or edited).
func (c *Controller) Settle(fx control.Effects) {
	q, ok := fx.Object().(*corev1.ResourceQuota)
	if !ok {
		return
	}
	if c.used == nil || StatusDiffers(q, corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: q.Status.Used}) {
		fx.QueueSync()
	}
}

// Sync recounts the usage and writes the status when it changed, then looks again
// after the sync period.
func (c *Controller) Sync(fx control.Effects) {
	q, ok := fx.Object().(*corev1.ResourceQuota)
	if !ok {
		return
	}
	c.recount(fx, q)
	c.write(fx, q)
	fx.SyncAt(fx.Now().Add(c.period))
}

func (c *Controller) recount(fx control.Effects, q *corev1.ResourceQuota) {
	c.used, c.pending = Recount(q.Spec.Hard, func(res string, fn func(runtime.Object) bool) {
		if fx.Serves(res) {
			fx.Each(res, q.Namespace, fn)
		}
	}, c.pending, fx.Now())
}

// write persists the status the quota should have, if it differs.
func (c *Controller) write(fx control.Effects, q *corev1.ResourceQuota) error {
	st := Status(q, c.used)
	if !StatusDiffers(q, st) {
		return nil
	}
	next := q.DeepCopy()
	next.Status = st
	err := fx.Write(next)
	if err != nil {
		fx.Log().WithField("error", err).Warn("write quota status")
	}
	return err
}

// Receive charges a create (ChargeRequest): it refuses what does not fit under
// status.hard given the usage counted and charged so far, and otherwise writes the
// new usage and answers only once it is durable. A quota that no longer exists
// charges nothing.
func (c *Controller) Receive(fx control.Effects, msg any) (any, error) {
	r, ok := msg.(ChargeRequest)
	if !ok {
		return nil, nil
	}
	q, ok := fx.Object().(*corev1.ResourceQuota)
	if !ok || q.DeletionTimestamp != nil {
		return nil, nil
	}
	if c.used == nil || StatusDiffers(q, corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: q.Status.Used}) {
		c.recount(fx, q) // never counted, or spec.hard changed: count before deciding
	}
	next, err := Admit(q.Spec.Hard, c.used, r.Resource, r.Object)
	if err != nil || r.DryRun {
		return nil, err
	}
	prevUsed, prevPending := c.used, c.pending
	c.used = next
	if m, err := meta.Accessor(r.Object); err == nil {
		c.pending = append(c.pending, Charge{Resource: r.Resource, Name: m.GetName(), UID: m.GetUID(),
			Usage: Usage(r.Resource, r.Object), At: fx.Now()})
	}
	if err := c.write(fx, q); err != nil {
		c.used, c.pending = prevUsed, prevPending
		return nil, err
	}
	return nil, nil
}
