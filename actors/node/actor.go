package node

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
)

// The node controller: each node's own actor watches its heartbeats (the agent's
// status updates are updates of the node, so the actor sees every one), marks the
// node's Ready condition Unknown when they stop, labels it with its hostname, and
// asks the evictor for its pods to be evicted once it has been NotReady or Unknown
// for the eviction timeout.

// Options are what every node controller is configured with.
type Options struct {
	Config
	// MonitorPeriod is how often a node with no deadline pending (one whose eviction
	// is due) is looked at again without any event.
	MonitorPeriod time.Duration
	// AllocateCIDRs: nodes stored without a spec.podCIDR ask their manager for one.
	AllocateCIDRs bool
}

// Controller is a node's controller (control.Controller).
type Controller struct {
	control.Base
	opts    *Options
	obs     Observed
	queued  bool  // an eviction request is waiting at the evictor
	decided int64 // the node's revision last decided on
	// cidrAsked is the node's revision at which it last asked the nodes manager for a
	// pod CIDR (an update through the manager, which fills one in).
	cidrAsked int64
}

var _ control.Controller = (*Controller)(nil)

// NewController returns the controller of one node.
func NewController(opts *Options) control.Controller { return &Controller{opts: opts} }

// Settle decides again whenever the node changed (a heartbeat, a cordon).
func (c *Controller) Settle(fx control.Effects) {
	if c.decided != fx.Revision() {
		fx.QueueSync()
	}
}

// Sync decides, writes the node, and asks for evictions.
func (c *Controller) Sync(fx control.Effects) {
	n, ok := fx.Object().(*corev1.Node)
	if !ok {
		return
	}
	now := fx.Now()
	plan := Decide(n, c.obs, c.opts.Config, now)
	c.obs = plan.Observed
	for _, ev := range plan.Events {
		fx.Record(n, corev1.EventTypeNormal, ev, EventMessage(n.Name, ev))
		if ev == EventNodeNotReady {
			fx.Log().Info("node not ready")
		}
	}
	if plan.Status != nil || plan.Hostname {
		next := n.DeepCopy()
		if plan.Status != nil {
			next.Status = *plan.Status
		}
		if plan.Hostname {
			if next.Labels == nil {
				next.Labels = map[string]string{}
			}
			next.Labels[HostnameLabel] = n.Name
		}
		if err := fx.Write(next); err != nil {
			fx.Log().WithField("error", err).Error("write own status")
		}
	}
	c.decided = fx.Revision()
	if c.opts.AllocateCIDRs && n.Spec.PodCIDR == "" && c.cidrAsked != fx.Revision() {
		// Stored without one (before allocation was on, or while the range was full).
		c.cidrAsked = fx.Revision()
		cur, _ := fx.Object().(*corev1.Node)
		if err := fx.Update("nodes", cur, cur.DeepCopy()); err != nil {
			fx.Log().WithField("error", err).Error("ask for a pod CIDR")
		}
	}

	var victims []*corev1.Pod
	if plan.Evict {
		fx.Each("pods", "", func(obj runtime.Object) bool {
			if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName == n.Name {
				victims = append(victims, p)
			}
			return true
		})
	}
	switch pods := Victims(n.Name, victims); {
	case len(pods) > 0: // (again: the evictor may have served the last one)
		fx.Tell(EvictorName, &EvictRequest{Eviction{Node: n.Name, Trace: fx.Trace(), Pods: pods}})
		c.queued = true
	case c.queued:
		fx.Tell(EvictorName, &EvictCancel{Node: n.Name})
		c.queued = false
	}

	// The plan's deadline (the grace period's end, the eviction's) is when the node
	// must be looked at again if nothing changes: the actor wakes exactly then, not
	// every monitor period before it; at 5,000 nodes that period's wake-ups were as
	// many as the heartbeats. Without a deadline (its eviction due), it looks again
	// every monitor period.
	next := plan.NextCheck
	if next.IsZero() {
		next = now.Add(c.opts.MonitorPeriod)
	}
	fx.SyncAt(next)
}

// EventMessage is the message of a node event, as the Kubernetes node controller
// words it.
func EventMessage(node, event string) string {
	if event == EventRegisteredNode {
		return fmt.Sprintf("Node %s event: Registered Node %s in NodeController", node, node)
	}
	return fmt.Sprintf("Node %s status is now: %s", node, event)
}

// Deleted withdraws the node's eviction request.
func (c *Controller) Deleted(fx control.Effects, _ runtime.Object) {
	if c.queued {
		fx.Tell(EvictorName, &EvictCancel{Node: fx.Self().Name})
		c.queued = false
	}
}
