package actors

import (
	"errors"
	"net/netip"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/persistence"
)

// The nodes manager owns the pod CIDR allocator (--allocate-node-cidrs): every node
// write passes through it before it is persisted, so a node written without a
// spec.podCIDR gets the lowest free subnet of the cluster CIDR filled in, in memory,
// before its actor stores it. A node that brings its own podCIDR keeps it (marked
// used when it is one of the subnets). What a node holds is released once its actor
// is gone and the store has no node of that name; the allocator is rebuilt from the
// stored nodes at start.

// PodCIDROptions configure the allocation of the nodes' pod CIDRs.
type PodCIDROptions struct {
	Allocate    bool         // --allocate-node-cidrs
	ClusterCIDR netip.Prefix // --cluster-cidr
	MaskSize    int          // --node-cidr-mask-size
}

type nodeCIDRs struct {
	env  *env
	cidr *node.CIDRs
	held map[objKey]netip.Prefix // subnets of the allocator, by node
}

var _ managerExt = (*nodeCIDRs)(nil)

func newNodeCIDRs(e *env) *nodeCIDRs {
	return &nodeCIDRs{env: e, held: map[objKey]netip.Prefix{}}
}

// load rebuilds the allocator from the stored nodes.
func (c *nodeCIDRs) load(m *manager) {
	var nodes []*corev1.Node
	m.env.store.Snapshot("nodes").Ascend("", "", func(it *persistence.Item) bool {
		if n, ok := it.Object.(*corev1.Node); ok {
			nodes = append(nodes, n)
		}
		return true
	})
	o := c.env.nodes.PodCIDRs
	a, errs := node.RebuildCIDRs(o.ClusterCIDR, o.MaskSize, nodes)
	for _, err := range errs {
		c.env.log.WithField("error", err).Warn("stored pod CIDR not held")
	}
	if a == nil { // Start validated the range
		panic(errors.Join(errs...))
	}
	c.cidr = a
	for _, n := range nodes {
		if p, ok := node.PodCIDR(n); ok && a.Has(p) {
			c.held[objKey{name: n.Name}] = p
		}
	}
}

// admit fills in the pod CIDR of a node create or update that has none.
func (c *nodeCIDRs) admit(m *manager, k objKey, msg routed, _ uint64) error {
	var slot *runtime.Object
	switch r := msg.(type) {
	case *createRequest:
		if _, err := m.env.store.Get(persistence.Key{Resource: "nodes", Name: k.name}); err == nil {
			return nil // it will fail: AlreadyExists
		}
		slot = &r.object
	case *updateRequest:
		slot = &r.object
	default:
		return nil
	}
	in, ok := (*slot).(*corev1.Node)
	if !ok {
		return nil
	}
	if p, ok := node.PodCIDR(in); ok {
		if _, mine := c.held[k]; !mine && c.cidr.Allocate(p) == nil {
			c.held[k] = p
		}
		return nil
	}
	p, ok := c.held[k]
	if !ok {
		var err error
		if p, err = c.cidr.AllocateNext(); err != nil {
			// Not the write's fault: store the node without one, as Kubernetes does.
			c.env.log.WithFields(logrus.Fields{"node": k.name, "error": err}).Warn("no pod CIDR for node")
			return nil
		}
		c.held[k] = p
	}
	n := in.DeepCopy()
	n.Spec.PodCIDR, n.Spec.PodCIDRs = p.String(), []string{p.String()}
	*slot = n
	return nil
}

// podCIDRsQuery asks the nodes manager which pod CIDRs of the allocator each node
// holds; the answer is a map[string]netip.Prefix by node name.
type podCIDRsQuery struct{}

func (c *nodeCIDRs) receive(_ *manager, ctx actor.Context, msg any) {
	if _, ok := msg.(*podCIDRsQuery); ok {
		out := make(map[string]netip.Prefix, len(c.held))
		for k, p := range c.held {
			out[k.name] = p
		}
		ctx.Respond(out)
	}
}

// forget settles what the node k holds with the store, now that its actor is gone:
// nothing when it is not stored (deleted, or its create failed), else its podCIDR.
func (c *nodeCIDRs) forget(m *manager, k objKey) {
	var stored netip.Prefix
	it, err := m.env.store.Get(persistence.Key{Resource: "nodes", Name: k.name})
	switch {
	case err == nil:
		n, _ := it.Object.(*corev1.Node)
		stored, _ = node.PodCIDR(n)
	case !errors.Is(err, persistence.ErrNotFound):
		m.env.log.WithFields(logrus.Fields{"node": k.name, "error": err}).Error("read node to release its pod CIDR")
		return // keep it: leaking beats handing a CIDR out twice
	}
	held, ok := c.held[k]
	if ok && held == stored {
		return
	}
	if ok {
		c.cidr.Release(held)
		delete(c.held, k)
	}
	if stored.IsValid() && c.cidr.Allocate(stored) == nil {
		c.held[k] = stored
	}
}
