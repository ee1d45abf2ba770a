package actors

import "github.com/asynkron/protoactor-go/actor"

// managerExt is the kind-specific part of a manager, for the few kinds whose
// manager owns something shared by all their objects (the services manager owns the
// cluster IP and node port allocators) or refuses some requests outright (the
// namespaces manager refuses to delete default and kube-system). Like the manager,
// it never blocks: it works on memory only.
type managerExt interface {
	// load sees the stored objects of the kind, once the manager has spawned their
	// actors.
	load(m *manager)
	// admit looks at a request before it is routed as the seq-th request to the
	// object's actor; an error is the request's answer and nothing is routed. It may
	// replace the request's object (never mutate it: the caller may still read it).
	admit(m *manager, k objKey, msg routed, seq uint64) error
	// receive sees the messages the manager does not know, and every childIdle
	// before the manager acts on it.
	receive(m *manager, ctx actor.Context, msg any)
	// forget is told that the key's actor is gone (idle, failed to spawn, or died).
	forget(m *manager, k objKey)
}

// newManagerExt returns the extension of the kind's manager, or nil.
func newManagerExt(e *env, resource string) managerExt {
	switch resource {
	case "services":
		return newServiceAllocations(e)
	case "namespaces":
		return protectedNamespaces{}
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
