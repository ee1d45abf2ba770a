package service

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
)

// The endpoints controller: each service's own actor keeps the Endpoints object of
// the same name equal to Endpoints over the pods of its namespace. Its sync runs when
// the service changes and when the pod feed says a pod it selects, or lists, changed;
// it writes through the endpoints' own actor, one write at a time.

// Retry is how long a service waits to write its endpoints again after a refused
// write.
const Retry = time.Second

// Controller is a service's controller (control.Controller).
type Controller struct {
	synced int64     // the service's revision last synced
	dirty  bool      // a sync was put off while a write was outstanding
	retry  bool      // the last write was refused: sync again after Retry
	sentAt time.Time // when the outstanding endpoints write was sent
}

var _ control.Controller = (*Controller)(nil)

// NewController returns the controller of one service.
func NewController() control.Controller { return &Controller{} }

// Settle syncs when there is a reason to.
func (c *Controller) Settle(fx control.Effects) {
	if fx.Outstanding() > 0 {
		return
	}
	if c.retry {
		c.retry = false
		fx.SyncAt(fx.Now().Add(Retry))
		return
	}
	switch {
	case c.synced != fx.Revision(): // the service itself changed
		fx.QueueSync()
	case c.dirty: // its pods changed: paced, like any resync
		fx.QueueResync()
	}
}

// Sync writes the service's load balancer ingress and its endpoints when they differ
// from the stored ones.
func (c *Controller) Sync(fx control.Effects) {
	svc, ok := fx.Object().(*corev1.Service)
	if !ok {
		return
	}
	c.synced = fx.Revision()
	if fx.Outstanding() > 0 {
		c.dirty = true
		return
	}
	c.dirty = false
	c.syncIngress(fx, svc)
	if !fx.Serves("endpoints") || svc.DeletionTimestamp != nil || len(svc.Spec.Selector) == 0 {
		return // endpoints of a service without a selector are the user's
	}
	var pods []*corev1.Pod
	fx.Each("pods", svc.Namespace, func(obj runtime.Object) bool {
		if p, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
		return true
	})
	want := Endpoints(svc, pods)
	cur, _ := fx.Get(endpointsRef(svc.Namespace, svc.Name)).(*corev1.Endpoints)
	if !Changed(cur, want) {
		return
	}
	var err error
	if cur == nil {
		err = fx.Create("endpoints", want)
	} else {
		next := cur.DeepCopy()
		next.Subsets, next.Labels = want.Subsets, want.Labels
		err = fx.Update("endpoints", cur, next)
	}
	if err != nil {
		fx.Log().WithField("error", err).Error("endpoints are invalid")
		return
	}
	c.sentAt = time.Now()
}

// syncIngress writes the service's status.loadBalancer.ingress when it differs from
// Ingress over the stored nodes (the node feed resyncs the LoadBalancer services
// when a node's readiness or address may have changed their ingress).
func (c *Controller) syncIngress(fx control.Effects, svc *corev1.Service) {
	if svc.DeletionTimestamp != nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) == 0 {
		return
	}
	var nodes []*corev1.Node
	fx.Each("nodes", "", func(obj runtime.Object) bool {
		if n, ok := obj.(*corev1.Node); ok {
			nodes = append(nodes, n)
		}
		return true
	})
	want := Ingress(svc, nodes)
	if !IngressChanged(svc.Status.LoadBalancer.Ingress, want) {
		return
	}
	next := svc.DeepCopy()
	next.Status.LoadBalancer.Ingress = want
	if err := fx.Write(next); err != nil {
		fx.Log().WithField("error", err).Warn("load balancer ingress write refused")
		c.retry = true
		return
	}
	fx.Log().WithField("ingress", len(want)).Info("load balancer ingress updated")
}

// Answered paces the next sync by the write's cost too (an Endpoints object of
// thousands of addresses costs more to write than to compute), and notes a refused
// write: the next sync tries again.
func (c *Controller) Answered(fx control.Effects, r control.Answer) {
	fx.Pace(time.Since(c.sentAt))
	if r.Err == nil {
		return
	}
	c.retry = true
	fx.Log().WithField("error", r.Err).Warn("endpoints write refused")
}

// Deleted deletes the endpoints of a deleted service.
func (c *Controller) Deleted(fx control.Effects, _ runtime.Object) {
	if fx.Serves("endpoints") {
		self := fx.Self()
		fx.Delete(endpointsRef(self.Namespace, self.Name), true)
	}
}

func endpointsRef(ns, name string) control.Ref {
	return control.Ref{Resource: "endpoints", Namespace: ns, Name: name}
}

// Lists reports whether ep has an address of pod p.
func Lists(ep *corev1.Endpoints, p *corev1.Pod) bool {
	for _, ss := range ep.Subsets {
		for _, as := range [][]corev1.EndpointAddress{ss.Addresses, ss.NotReadyAddresses} {
			for _, a := range as {
				if a.TargetRef != nil && a.TargetRef.Kind == "Pod" && a.TargetRef.Name == p.Name {
					return true
				}
			}
		}
	}
	return false
}

// Selects reports whether svc selects pod p (a service without a selector selects
// nothing).
func Selects(svc *corev1.Service, p *corev1.Pod) bool {
	return len(svc.Spec.Selector) > 0 && labels.ValidatedSetSelector(svc.Spec.Selector).Matches(labels.Set(p.Labels))
}
