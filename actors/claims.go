package actors

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/service"
	"github.com/kubeactor/kubeactor/persistence"
)

// Claims returns the store's claims (persistence's Options.Claims) for this control
// plane: a service holds its cluster IP and node ports, and, when the nodes' pod
// CIDRs are allocated, a node holds its pod CIDR when it is one of the cluster CIDR's
// subnets. The store refuses a write that claims what another object holds, on
// every replica alike, so the allocators (serviceips.go, nodecidrs.go) may run on
// any member, each with its own memory of what is free: two that pick the same value
// at once cannot both store it. The options must be the same on every replica.
func Claims(nodes NodeOptions) (func(resource string, obj runtime.Object) []string, error) {
	var cidrs *node.CIDRs
	if o := nodes.PodCIDRs; o.Allocate {
		var err error
		if cidrs, err = node.NewCIDRs(o.ClusterCIDR, o.MaskSize); err != nil {
			return nil, err
		}
	}
	return func(resource string, obj runtime.Object) []string {
		switch o := obj.(type) {
		case *corev1.Service:
			return service.Claims(o)
		case *corev1.Node:
			if cidrs == nil {
				return nil
			}
			if p, ok := node.PodCIDR(o); ok {
				if c, ok := cidrs.Claim(p); ok {
					return []string{c}
				}
			}
		}
		return nil
	}, nil
}

// ClaimResources are the resources whose objects Claims finds claims in
// (persistence's Options.ClaimResources).
var ClaimResources = []string{"services", "nodes"}

// heldByAnother reports whether the store names an object other than key as the
// holder of claim: a value another member's allocator gave out, which this member's
// does not know of.
func (e *env) heldByAnother(key persistence.Key, claim string) bool {
	h, ok := e.store.ClaimHolder(claim)
	return ok && h != key
}

// foreign are the values an allocator keeps marked as taken because the store named
// an object of another member as their holder, each with its claim. They stay marked
// (so that the next allocation does not step over them again) until the allocator
// runs out, when those no longer held are given back, or until their object comes to
// this member (adopt).
type foreign[V comparable] map[V]string

// allocateFree takes the next value of an allocator (next) whose claim no other
// object holds in the store (held), marking those it steps over as foreign.
func allocateFree[V comparable](next func() (V, error), release func(V), claim func(V) string,
	held func(string) bool, f foreign[V]) (V, error) {
	revalidated := false
	for {
		v, err := next()
		if err == nil {
			c := claim(v)
			if !held(c) {
				return v, nil
			}
			f[v] = c
			continue
		}
		if revalidated || len(f) == 0 {
			return v, err
		}
		revalidated = true
		for fv, c := range f {
			if !held(c) {
				release(fv)
				delete(f, fv)
			}
		}
	}
}

// adopt takes v, which the allocator has marked, when it is foreign and no other
// object holds it now (its object came to this member).
func (f foreign[V]) adopt(v V, held func(string) bool) bool {
	c, ok := f[v]
	if !ok || held(c) {
		return false
	}
	delete(f, v)
	return true
}
