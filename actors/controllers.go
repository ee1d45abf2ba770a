package actors

import (
	"fmt"
	"net/netip"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeactor/kubeactor/actors/control"
	"github.com/kubeactor/kubeactor/actors/event"
	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/actors/namespace"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/persistentvolume"
	"github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/actors/replication"
	"github.com/kubeactor/kubeactor/actors/resourcequota"
	"github.com/kubeactor/kubeactor/actors/service"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
)

// NodeOptions configure the node controller (the controller-manager's flags).
type NodeOptions struct {
	node.Config
	// MonitorPeriod is how often a node with no deadline pending is looked at again
	// without any event (--node-monitor-period).
	MonitorPeriod time.Duration
	// PodCIDRs configure the allocation of each node's spec.podCIDR (nodecidrs.go);
	// the zero value allocates none.
	PodCIDRs PodCIDROptions
}

// ServiceOptions configure the allocation of service addresses.
type ServiceOptions struct {
	ClusterIPRange netip.Prefix      // --service-cluster-ip-range
	NodePortRange  utilnet.PortRange // --service-node-port-range
	// ClusterDNS, when valid, is the cluster IP kept for kube-system/kube-dns
	// (--cluster-dns): no other service is given it.
	ClusterDNS netip.Addr
}

// DefaultClusterIPRange is the book's --service-cluster-ip-range.
var DefaultClusterIPRange = netip.MustParsePrefix("10.254.0.0/16")

// withDefaults fills the zero fields with the Kubernetes 1.0 defaults and checks the
// ranges.
func (o *NodeOptions) withDefaults() error {
	d := node.DefaultConfig()
	if o.MonitorGracePeriod <= 0 {
		o.MonitorGracePeriod = d.MonitorGracePeriod
	}
	if o.StartupGracePeriod <= 0 {
		o.StartupGracePeriod = d.StartupGracePeriod
	}
	if o.PodEvictionTimeout <= 0 {
		o.PodEvictionTimeout = d.PodEvictionTimeout
	}
	if o.DeletingPodsQPS <= 0 {
		o.DeletingPodsQPS = d.DeletingPodsQPS
	}
	if o.DeletingPodsBurst <= 0 {
		o.DeletingPodsBurst = d.DeletingPodsBurst
	}
	if o.MonitorPeriod <= 0 {
		o.MonitorPeriod = 5 * time.Second
	}
	if o.PodCIDRs.Allocate {
		if _, err := node.NewCIDRs(o.PodCIDRs.ClusterCIDR, o.PodCIDRs.MaskSize); err != nil {
			return fmt.Errorf("cluster CIDR: %w", err)
		}
	}
	return nil
}

func (o *ServiceOptions) withDefaults() error {
	if !o.ClusterIPRange.IsValid() {
		o.ClusterIPRange = DefaultClusterIPRange
	}
	if o.NodePortRange.Size == 0 {
		o.NodePortRange = service.DefaultNodePorts
	}
	if _, err := service.NewIPs(o.ClusterIPRange); err != nil {
		return fmt.Errorf("service cluster IP range: %w", err)
	}
	if _, err := service.NewPorts(o.NodePortRange); err != nil {
		return fmt.Errorf("service node port range: %w", err)
	}
	if o.ClusterDNS.IsValid() && !o.ClusterIPRange.Contains(o.ClusterDNS) {
		return fmt.Errorf("cluster DNS address %s: not in the service cluster IP range %s", o.ClusterDNS, o.ClusterIPRange)
	}
	return nil
}

// controllerFor returns the constructor of the controller of resource's objects: the
// one place that names each kind's controller (TestControllersNameStoredKinds).
func (e *env) controllerFor(resource string) func() control.Controller {
	switch resource {
	case "pods":
		return pod.NewController
	case "namespaces":
		if e.serviceAccounts != nil {
			return serviceaccount.NewNamespaceController
		}
		return namespace.NewController
	case "serviceaccounts":
		opts := e.serviceAccounts // nil: the controller does nothing
		return func() control.Controller { return serviceaccount.NewController(opts) }
	case "replicationcontrollers":
		return replication.NewController
	case "services":
		return service.NewController
	case "nodes":
		opts := &node.Options{Config: e.nodes.Config, MonitorPeriod: e.nodes.MonitorPeriod, AllocateCIDRs: e.nodes.PodCIDRs.Allocate}
		return func() control.Controller { return node.NewController(opts) }
	case "resourcequotas":
		period := e.quotaSyncPeriod
		return func() control.Controller { return resourcequota.NewController(period) }
	case "persistentvolumes":
		opts := e.pvRecycler
		return func() control.Controller { return persistentvolume.NewVolumeController(opts) }
	case "persistentvolumeclaims":
		return persistentvolume.NewClaimController
	case "events":
		ttl := e.eventTTL
		return func() control.Controller { return event.NewController(ttl) }
	}
	return newBase
}

func newBase() control.Controller { return control.Base{} }

// controlled are the kinds controllerFor gives a controller of their own.
var controlled = []string{"pods", "namespaces", "replicationcontrollers", "services", "nodes", "events", "resourcequotas",
	"persistentvolumes", "persistentvolumeclaims", "serviceaccounts"}

// Actors on demand. Every stored object has an actor while it needs one, not always:
// a kind whose controller does nothing on its own (no Settle, Sync or timer of its
// own, no feed that resyncs it, no allocator in its manager: managerExt) only answers
// requests, and manager.route spawns the actor of an unmapped object when a request
// arrives for it (the actor loads the object from the store). So at start its manager
// spawns actors only for the objects that need one now: those with a pending
// deadline (lifecycle.Deadline: a terminating pod's grace period, which the actor
// times). A resync for an unmapped object of such a kind is dropped: its controller
// has nothing to look again at. At 150,000 pods this saves 150,000 actors (about
// 2 KB each: cell, context, mailbox, process registry entry) and their spawning at
// every start (docs/benchmarks.md, issue 18).
//
// onDemandControlled are the kinds with a controller of their own (controlled) whose
// objects are spawned on demand: the pod controller only decides deletions
// (control.Deleter). Every kind without a controller (control.Base) is on demand too;
// every other kind gets an actor for each stored object at start.
var onDemandControlled = []string{"pods"}

// onDemand tells whether resource's objects get an actor only when they need one.
func onDemand(resource string) bool {
	return slices.Contains(onDemandControlled, resource) || !slices.Contains(controlled, resource)
}

// needsActor tells whether a stored object of an on-demand kind needs its actor
// without any request: it has a deadline the actor times (see objectActor.settle).
func needsActor(obj runtime.Object) bool {
	_, ok := lifecycle.Deadline(obj)
	return ok
}
