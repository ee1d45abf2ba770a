package resource

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resource describes one kind served under /api/v1. Function fields may be nil when
// the kind has nothing to do at that step.
type Resource struct {
	Name         string // plural, e.g. "pods"
	SingularName string // e.g. "pod"
	Kind         string // e.g. "Pod"
	ShortNames   []string
	Namespaced   bool
	Verbs        []string // discovery verbs, e.g. get list watch create update patch delete deletecollection
	Subresources []string // e.g. "status", "binding", "scale", "finalize"

	New     func() runtime.Object // empty object
	NewList func() runtime.Object // empty list

	// Default applies v1 defaulting (in place) to a decoded object.
	Default func(obj runtime.Object)
	// PrepareForCreate resets what a user may not set at create (e.g. status), in place.
	PrepareForCreate func(obj runtime.Object)
	// PrepareForUpdate carries over from old what the main resource may not change
	// (e.g. status) and bumps metadata.generation when the spec changed, in place.
	PrepareForUpdate func(obj, old runtime.Object)
	// PrepareForStatusUpdate keeps everything of old but the status of obj, in place.
	PrepareForStatusUpdate func(obj, old runtime.Object)
	// Validate and ValidateUpdate return field-level errors (metadata included).
	Validate       func(obj runtime.Object) field.ErrorList
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// Fields returns the values field selectors may match (metadata.name and
	// metadata.namespace always included).
	Fields func(obj runtime.Object) fields.Set
	// Columns and Row give the server-side printing of `kubectl get`; Row returns one
	// cell per column.
	Columns []metav1.TableColumnDefinition
	Row     func(obj runtime.Object) []interface{}
}

// CONTRACT STUB: the resource-table implementation replaces these bodies.

// All returns every served resource, in discovery order.
func All() []*Resource { panic("unimplemented") }

// Lookup finds a resource by its plural name or an alias the API accepts for it
// (for example "limits" for limitranges).
func Lookup(name string) (*Resource, bool) { panic("unimplemented") }
