package admission

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamespaceReader reads namespaces (the actors' implementation reads the store).
type NamespaceReader interface {
	// Namespace returns the namespace called name; found is false when there is none.
	Namespace(name string) (ns *corev1.Namespace, found bool, err error)
}

// NamespaceLifecycle keeps namespaced objects inside live namespaces: a create needs
// its namespace to exist (404 NotFound) and not be terminating (403 Forbidden), and
// the immortal namespaces (default, kube-system) may not be deleted (403 Forbidden).
type NamespaceLifecycle struct {
	namespaces NamespaceReader
	immortal   []string
}

var _ Plugin = (*NamespaceLifecycle)(nil)

// NewNamespaceLifecycle returns the plugin; immortal names the namespaces that may
// not be deleted.
func NewNamespaceLifecycle(namespaces NamespaceReader, immortal []string) *NamespaceLifecycle {
	return &NamespaceLifecycle{namespaces: namespaces, immortal: slices.Clone(immortal)}
}

// Name is the plugin's name in the book's --admission-control list.
func (*NamespaceLifecycle) Name() string { return "NamespaceLifecycle" }

// Admit refuses creates in missing or terminating namespaces and deletes of the
// immortal namespaces.
func (l *NamespaceLifecycle) Admit(a *Attributes) error {
	if a.Resource == "namespaces" {
		if a.Operation == Delete && a.Subresource == "" && slices.Contains(l.immortal, a.Name) {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, a.Name,
				errors.New("this namespace may not be deleted"))
		}
		return nil
	}
	if a.Operation != Create || a.Namespace == "" {
		return nil
	}
	ns, found, err := l.namespaces.Namespace(a.Namespace)
	switch {
	case err != nil:
		return fmt.Errorf("admission: read namespace %s: %w", a.Namespace, err)
	case !found:
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, a.Namespace)
	case ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating:
		return apierrors.NewForbidden(schema.GroupResource{Resource: a.Resource}, a.Name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	}
	return nil
}
