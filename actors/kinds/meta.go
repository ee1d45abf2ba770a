package kinds

import (
	"cmp"
	"slices"
	"time"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// verbs as discovery lists them.
var (
	verbsAll          = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	verbsNoCollection = []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	verbsReadOnly     = []string{"get", "list"}
	verbsCreateOnly   = []string{"create"}
	metaPath          = field.NewPath("metadata")
	nameDNSSubdomain  = apimachineryvalidation.NameIsDNSSubdomain
	nameDNSLabel      = apimachineryvalidation.NameIsDNSLabel
	nameDNS1035Label  = apimachineryvalidation.NameIsDNS1035Label
	nameColumn        = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	ageColumn         = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
	containersColumn  = "Names of each container in the template."
	imagesColumn      = "Images referenced by each container in the template."
	noneCell          = "<none>"
	unknownCell       = "<unknown>"
	unsetCell         = "<unset>"
)

// HumanAge renders the time since t the way kubectl does (5s, 3m10s, 2d),
// or "<unknown>" when t is zero.
func HumanAge(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return unknownCell
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// The adapters below turn typed per-kind functions into the table's
// runtime.Object signatures. A wrong type is a programming error of the caller.

func defaulter[T runtime.Object](f func(T)) func(runtime.Object) {
	return func(obj runtime.Object) { f(obj.(T)) }
}

func updater[T runtime.Object](f func(obj, old T)) func(runtime.Object, runtime.Object) {
	return func(obj, old runtime.Object) { f(obj.(T), old.(T)) }
}

func validator[T runtime.Object](f func(T) field.ErrorList) func(runtime.Object) field.ErrorList {
	return func(obj runtime.Object) field.ErrorList { return f(obj.(T)) }
}

func updateValidator[T runtime.Object](f func(obj, old T) field.ErrorList) func(runtime.Object, runtime.Object) field.ErrorList {
	return func(obj, old runtime.Object) field.ErrorList { return f(obj.(T), old.(T)) }
}

func fieldSetter[T runtime.Object](f func(T) fields.Set) func(runtime.Object) fields.Set {
	return func(obj runtime.Object) fields.Set { return f(obj.(T)) }
}

func rower[T runtime.Object](f func(T, time.Time) []interface{}) func(runtime.Object, time.Time) []interface{} {
	return func(obj runtime.Object, now time.Time) []interface{} { return f(obj.(T), now) }
}

// metaFields adds the fields every kind supports to extra (the kind's own fields, a
// fresh set, or nil) and returns it.
func metaFields(m *metav1.ObjectMeta, extra fields.Set) fields.Set {
	if extra == nil {
		extra = make(fields.Set, 2)
	}
	// Into extra, the caller's own fresh set: one map per object, not two (a watch
	// with a field selector computes the set of every event it filters).
	extra["metadata.name"], extra["metadata.namespace"] = m.Name, m.Namespace
	return extra
}

// validateMeta validates metadata on create.
func validateMeta(m *metav1.ObjectMeta, namespaced bool, nameFn apimachineryvalidation.ValidateNameFunc) field.ErrorList {
	return apimachineryvalidation.ValidateObjectMeta(m, namespaced, nameFn, metaPath)
}

// validateMetaUpdate validates metadata on update (name, namespace, uid and
// creationTimestamp immutable; resourceVersion present).
func validateMetaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
	return apimachineryvalidation.ValidateObjectMetaUpdate(m, old, metaPath)
}

// statusKeepsMeta is the status-update validation of a kind whose
// PrepareForStatusUpdate takes the stored metadata and spec (pods, nodes): both were
// validated when they were written and the update changes neither, so there is
// nothing left to check. (Validating the copy of the metadata against the stored
// one, a regular expression per label, was a tenth of the server's CPU on 5,000
// nodes' heartbeats.)
func statusKeepsMeta(runtime.Object, runtime.Object) field.ErrorList { return nil }

// keepMetaForStatus replaces m with old but keeps the resourceVersion the
// client sent, so that optimistic concurrency still applies: a status update
// changes status only.
func keepMetaForStatus(m *metav1.ObjectMeta, old *metav1.ObjectMeta) {
	rv := m.ResourceVersion
	old.DeepCopyInto(m) // in place: no copy of the copy
	m.ResourceVersion = rv
}

// bumpGeneration increments the generation when changed; old generation is kept
// otherwise.
func bumpGeneration(m *metav1.ObjectMeta, old *metav1.ObjectMeta, changed bool) {
	m.Generation = old.Generation
	if changed {
		m.Generation = old.Generation + 1
	}
}

// sortedKeys returns a map's keys in order, so that errors and cells come out
// in a stable order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
