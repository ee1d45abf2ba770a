package admission

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamespaceCreator creates namespaces (the actors' implementation asks the
// namespace's actor).
type NamespaceCreator interface {
	// CreateNamespace creates the namespace called name; one that already exists is
	// no error.
	CreateNamespace(name string) error
}

// NamespaceExists refuses every request in a namespace that does not exist with 404
// NotFound, as v1.0's plugin of that name.
type NamespaceExists struct{ namespaces NamespaceReader }

// NamespaceAutoProvision creates the namespace of a create when it does not exist
// (v1.0's deprecated plugin of that name).
type NamespaceAutoProvision struct {
	namespaces NamespaceReader
	creator    NamespaceCreator
}

var (
	_ Plugin = (*NamespaceExists)(nil)
	_ Plugin = (*NamespaceAutoProvision)(nil)
)

// NewNamespaceExists returns the plugin.
func NewNamespaceExists(namespaces NamespaceReader) *NamespaceExists {
	return &NamespaceExists{namespaces: namespaces}
}

// Name is the plugin's name in the --admission-control list.
func (*NamespaceExists) Name() string { return "NamespaceExists" }

// Admit refuses a namespaced request whose namespace does not exist.
func (e *NamespaceExists) Admit(a *Attributes) error {
	if a.Namespace == "" || a.Resource == "namespaces" {
		return nil
	}
	_, found, err := e.namespaces.Namespace(a.Namespace)
	switch {
	case err != nil:
		return fmt.Errorf("admission: read namespace %s: %w", a.Namespace, err)
	case !found:
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, a.Namespace)
	}
	return nil
}

// NewNamespaceAutoProvision returns the plugin.
func NewNamespaceAutoProvision(namespaces NamespaceReader, creator NamespaceCreator) *NamespaceAutoProvision {
	return &NamespaceAutoProvision{namespaces: namespaces, creator: creator}
}

// Name is the plugin's name in the --admission-control list.
func (*NamespaceAutoProvision) Name() string { return "NamespaceAutoProvision" }

// Admit creates the namespace of a namespaced create when it is missing; a dry run
// creates nothing. A failure to create it refuses the create (403).
func (p *NamespaceAutoProvision) Admit(a *Attributes) error {
	if a.Operation != Create || a.Namespace == "" || a.Resource == "namespaces" {
		return nil
	}
	_, found, err := p.namespaces.Namespace(a.Namespace)
	switch {
	case err != nil:
		return fmt.Errorf("admission: read namespace %s: %w", a.Namespace, err)
	case found || a.DryRun:
		return nil
	}
	if err := p.creator.CreateNamespace(a.Namespace); err != nil {
		return forbidden(a, err)
	}
	return nil
}
