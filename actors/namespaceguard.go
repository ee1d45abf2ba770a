package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// ForbiddenError is a request refused whatever its content (deleting the default
// namespace). The gateway answers 403 Forbidden.
type ForbiddenError struct {
	Resource string // plural, e.g. "namespaces"
	Name     string
	Reason   string // e.g. "this namespace may not be deleted"
}

func (e *ForbiddenError) Error() string {
	return e.Resource + " \"" + e.Name + "\" is forbidden: " + e.Reason
}

// protectedNamespaces is the namespaces manager's extension: it refuses to delete
// default and kube-system.
type protectedNamespaces struct{}

var _ managerExt = protectedNamespaces{}

func (protectedNamespaces) load(*manager) {}

func (protectedNamespaces) admit(_ *manager, k objKey, msg routed, _ uint64) error {
	if _, del := msg.(*deleteRequest); del && slices.Contains(kinds.BootstrapNamespaces, k.name) {
		return &ForbiddenError{Resource: "namespaces", Name: k.name, Reason: "this namespace may not be deleted"}
	}
	return nil
}

func (protectedNamespaces) receive(*manager, actor.Context, any) {}

func (protectedNamespaces) forget(*manager, objKey) {}
