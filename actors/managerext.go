package actors

import "github.com/asynkron/protoactor-go/actor"

// managerExt is the kind-specific part of a manager, for the few kinds whose manager
// owns an allocator shared by all their objects: the services manager's cluster IPs
// and node ports (serviceips.go), the nodes manager's pod CIDRs (nodecidrs.go). These
// are allocators, not admission: whether a write is allowed at all is decided by the
// admission chain in the object's actor (admit.go). Like the manager, an extension
// never blocks: it works on memory only (its own, and the store's in-memory state:
// what another member's object holds is the store's claims, claims.go).
type managerExt interface {
	// load sees the stored objects of the kind, once the manager has spawned their
	// actors.
	load(m *manager)
	// admit looks at a request before it is routed as the seq-th request to the
	// object's actor, to allocate what it needs; an error (the value asked for is
	// taken) is the request's answer and nothing is routed. It may replace the
	// request's object (never mutate it: the caller may still read it). Dry runs
	// are not shown to it.
	admit(m *manager, k objKey, msg routed, seq uint64) error
	// receive sees the messages the manager does not know, and every childIdle
	// before the manager acts on it.
	receive(m *manager, ctx actor.Context, msg any)
	// forget is told that the key's actor is gone (idle, failed to spawn, or died).
	forget(m *manager, k objKey)
}

// newManagerExt returns the allocators of the kind's manager, or nil.
func newManagerExt(e *env, resource string) managerExt {
	switch resource {
	case "services":
		return newServiceAllocations(e)
	case "nodes":
		if e.nodes.PodCIDRs.Allocate {
			return newNodeCIDRs(e)
		}
	}
	return nil
}

// reportsStored tells whether the kind's object actors report what they store to
// their manager after each write request (a stored message): the services manager
// releases the addresses a service no longer holds.
func reportsStored(resource string) bool { return resource == "services" }
