package actors

import (
	"errors"
	"net/netip"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"

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
	// foreign: subnets the store gives to nodes of other members (claims.go).
	foreign foreign[netip.Prefix]
}

var _ managerExt = (*nodeCIDRs)(nil)

func newNodeCIDRs(e *env) *nodeCIDRs {
	return &nodeCIDRs{env: e, held: map[objKey]netip.Prefix{}, foreign: foreign[netip.Prefix]{}}
}

// load rebuilds the allocator from the stored nodes.
func (c *nodeCIDRs) load(m *manager) {
	var nodes []*corev1.Node
	m.env.store.Snapshot("nodes").Ascend("", "", func(it *persistence.Item) bool {
		// Another member's nodes are its allocator's: this one learns of what they
		// hold from the store when it allocates (heldByAnother).
		if n, ok := it.Object().(*corev1.Node); ok && m.env.local(it.Key) {
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

// loadStored makes the pod CIDR the stored node k holds this allocator's, when it
// has not seen the node yet (another member hosted it until now).
func (c *nodeCIDRs) loadStored(m *manager, k objKey) {
	if _, ok := c.held[k]; ok {
		return
	}
	it, err := m.env.store.Get(persistence.Key{Resource: "nodes", Name: k.name})
	if err != nil {
		return
	}
	if p, ok := node.PodCIDR(it.Object().(*corev1.Node)); ok {
		if _, ours := c.cidr.Claim(p); ours {
			_ = c.cidr.Allocate(p) // marked already when it was foreign
			delete(c.foreign, p)
			c.held[k] = p
		}
	}
}

// admit fills in the pod CIDR of a node create or update that has none.
func (c *nodeCIDRs) admit(m *manager, k objKey, msg routed, _ uint64) error {
	var slot *runtime.Object
	var al *allocation
	switch r := msg.(type) {
	case *createRequest:
		if _, err := m.env.store.Get(persistence.Key{Resource: "nodes", Name: k.name}); err == nil {
			return nil // it will fail: AlreadyExists
		}
		slot, al = &r.object, &r.allocation
	case *updateRequest:
		slot, al = &r.object, &r.allocation
	default:
		return nil
	}
	in, ok := (*slot).(*corev1.Node)
	if !ok {
		return nil
	}
	c.loadStored(m, k)
	key := persistence.Key{Resource: "nodes", Name: k.name}
	held := func(claim string) bool { return m.env.heldByAnother(key, claim) }
	if p, ok := node.PodCIDR(in); ok {
		if _, mine := c.held[k]; !mine {
			claim, ours := c.cidr.Claim(p)
			if ours && held(claim) {
				holder, _ := m.env.store.ClaimHolder(claim)
				return &InvalidError{Kind: "Node", Name: k.name, Causes: field.ErrorList{field.Invalid(
					field.NewPath("spec", "podCIDR"), p.String(), "is the pod CIDR of node "+holder.Name)}}
			}
			if c.cidr.Allocate(p) == nil || (ours && c.foreign.adopt(p, held)) {
				c.held[k] = p
			}
		}
		return nil
	}
	p, ok := c.held[k]
	if ok && al.allocs > 0 {
		// Allocated again: the store gave the CIDR to a node of another member that
		// allocated it at the same moment. It stays marked, as that node's.
		if claim, _ := c.cidr.Claim(p); held(claim) {
			c.foreign[p] = claim
			delete(c.held, k)
			ok = false
		}
	}
	if !ok {
		next := c.cidr.AllocateNext
		if al.allocs > 0 { // the lowest free ones are being taken elsewhere: look elsewhere
			next = func() (netip.Prefix, error) { return c.cidr.AllocateRandom(rand.Intn) }
		}
		var err error
		p, err = allocateFree(next, c.cidr.Release, node.PodCIDRClaim, held, c.foreign)
		if err != nil {
			// Not the write's fault: store the node without one, as Kubernetes does.
			c.env.log.WithFields(logrus.Fields{"node": k.name, "error": err}).Warn("no pod CIDR for node")
			return nil
		}
		c.held[k] = p
	}
	n := in.DeepCopy()
	n.Spec.PodCIDR, n.Spec.PodCIDRs = p.String(), []string{p.String()}
	*slot = n
	al.filled(in)
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
	if !m.env.local(persistence.Key{Resource: "nodes", Name: k.name}) {
		// Another member hosts the node now: its allocator holds the CIDR.
		if p, ok := c.held[k]; ok {
			c.cidr.Release(p)
			delete(c.held, k)
		}
		return
	}
	var stored netip.Prefix
	it, err := m.env.store.Get(persistence.Key{Resource: "nodes", Name: k.name})
	switch {
	case err == nil:
		n, _ := it.Object().(*corev1.Node)
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
