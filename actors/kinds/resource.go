package kinds

import (
	"sort"
	"time"

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

	// Stored kinds are kept in the store and have an actor per object; the others are
	// computed per request (componentstatuses) or are a write to another kind (bindings).
	Stored bool
	// DeleteReturnsObject: the real API answers a DELETE of this kind with the object
	// (its last state, or the state marked for deletion), not a Status.
	DeleteReturnsObject bool
	// Controller names the component that reconciles this kind (the source of the
	// events its object actors record); "" for kinds nothing reconciles.
	Controller string

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
	// ValidateStatusUpdate, when set, validates a status update in place of
	// ValidateUpdate: PrepareForStatusUpdate took the metadata and spec of the stored
	// object, which was validated when it was written, so only what the status
	// update may change is looked at (as Kubernetes' status strategies do).
	ValidateStatusUpdate func(obj, old runtime.Object) field.ErrorList
	// Fields returns the values field selectors may match (metadata.name and
	// metadata.namespace always included).
	Fields func(obj runtime.Object) fields.Set
	// Columns and Row give the server-side printing of `kubectl get`; Row returns one
	// cell per column.
	Columns []metav1.TableColumnDefinition
	Row     func(obj runtime.Object) []interface{}
	// RowAt is Row with the reference time for relative cells (AGE, LAST SEEN), so
	// that the table stays pure; Row is left nil and callers use RowAt.
	RowAt func(obj runtime.Object, now time.Time) []interface{}
}

// table is every served resource, sorted by plural name (discovery order).
var table = func() []*Resource {
	all := []*Resource{
		bindings, componentStatuses, endpoints, events, limitRanges, namespaces, nodes,
		persistentVolumeClaims, persistentVolumes, pods, podTemplates,
		replicationControllers, resourceQuotas, secrets, serviceAccounts, services,
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}()

// BootstrapNamespaces are the namespaces every cluster has: created at start when
// missing, and never deleted.
var BootstrapNamespaces = []string{"default", "kube-system"}

// Stored returns the plural names of the stored kinds, in discovery order.
func Stored() []string {
	var out []string
	for _, r := range table {
		if r.Stored {
			out = append(out, r.Name)
		}
	}
	return out
}

// aliases are the extra names the API accepts in a path for a resource.
var aliases = map[string]string{"limits": "limitranges"}

// All returns every served resource, in discovery order.
func All() []*Resource {
	out := make([]*Resource, len(table))
	copy(out, table)
	return out
}

// Lookup finds a resource by its plural name or an alias the API accepts for it
// (for example "limits" for limitranges).
func Lookup(name string) (*Resource, bool) {
	if real, ok := aliases[name]; ok {
		name = real
	}
	for _, r := range table {
		if r.Name == name {
			return r, true
		}
	}
	return nil, false
}

// LookupKind finds a resource by its kind, e.g. "Pod".
func LookupKind(kind string) (*Resource, bool) {
	for _, r := range table {
		if r.Kind == kind {
			return r, true
		}
	}
	return nil, false
}
