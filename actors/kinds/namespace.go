package kinds

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// namespaceNameLabel is the label every namespace carries with its own name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

var namespaces = &Resource{
	Name:                "namespaces",
	SingularName:        "namespace",
	Kind:                "Namespace",
	ShortNames:          []string{"ns"},
	Namespaced:          false,
	Verbs:               verbsNoCollection,
	Subresources:        []string{"finalize", "status"},
	Stored:              true,
	DeleteReturnsObject: true,
	Controller:          "namespace-controller",

	New:     func() runtime.Object { return &corev1.Namespace{} },
	NewList: func() runtime.Object { return &corev1.NamespaceList{} },

	Default: defaulter(func(ns *corev1.Namespace) {
		if ns.Status.Phase == "" {
			ns.Status.Phase = corev1.NamespaceActive
		}
		if ns.Name != "" {
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels[namespaceNameLabel] = ns.Name
		}
	}),
	PrepareForCreate: defaulter(func(ns *corev1.Namespace) {
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
		ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	}),
	// The main resource changes neither status nor the spec's finalizers (the
	// finalize subresource does, see PrepareForFinalize).
	PrepareForUpdate: updater(func(ns, old *corev1.Namespace) {
		ns.Spec.Finalizers = append([]corev1.FinalizerName(nil), old.Spec.Finalizers...)
		ns.Status = *old.Status.DeepCopy()
	}),
	PrepareForStatusUpdate: updater(func(ns, old *corev1.Namespace) {
		keepMetaForStatus(&ns.ObjectMeta, &old.ObjectMeta)
		ns.Spec = *old.Spec.DeepCopy()
	}),
	Validate: validator(func(ns *corev1.Namespace) field.ErrorList {
		errs := validateMeta(&ns.ObjectMeta, false, nameDNSLabel)
		return append(errs, validateNamespaceFinalizers(ns.Spec.Finalizers)...)
	}),
	ValidateUpdate: updateValidator(func(ns, old *corev1.Namespace) field.ErrorList {
		errs := validateMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta)
		errs = append(errs, validateNamespaceFinalizers(ns.Spec.Finalizers)...)
		if ns.Status.Phase != corev1.NamespaceActive && ns.Status.Phase != corev1.NamespaceTerminating {
			errs = append(errs, field.NotSupported(field.NewPath("status", "phase"), ns.Status.Phase, []string{string(corev1.NamespaceActive), string(corev1.NamespaceTerminating)}))
		}
		if old.DeletionTimestamp == nil && ns.Status.Phase == corev1.NamespaceTerminating && old.Status.Phase != corev1.NamespaceTerminating {
			errs = append(errs, field.Invalid(field.NewPath("status", "phase"), ns.Status.Phase, "may only be set to Terminating when the namespace is being deleted"))
		}
		return errs
	}),
	Fields: fieldSetter(func(ns *corev1.Namespace) fields.Set {
		return metaFields(&ns.ObjectMeta, fields.Set{"status.phase": string(ns.Status.Phase)})
	}),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		ageColumn,
	},
	RowAt: rower(func(ns *corev1.Namespace, now time.Time) []interface{} {
		return []interface{}{ns.Name, string(ns.Status.Phase), HumanAge(ns.CreationTimestamp, now)}
	}),
}

// PrepareForFinalize prepares an update through a namespace's finalize
// subresource: everything of old is kept but obj's spec.finalizers (and the
// resourceVersion the client sent). obj and old must be *corev1.Namespace.
func PrepareForFinalize(obj, old runtime.Object) {
	ns, prev := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	finalizers := ns.Spec.Finalizers
	keepMetaForStatus(&ns.ObjectMeta, &prev.ObjectMeta)
	ns.Status = *prev.Status.DeepCopy()
	ns.Spec = *prev.Spec.DeepCopy()
	ns.Spec.Finalizers = finalizers
}

// validateNamespaceFinalizers accepts standard finalizer names and qualified
// names with a domain prefix.
func validateNamespaceFinalizers(fs []corev1.FinalizerName) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "finalizers")
	for _, f := range fs {
		if f == corev1.FinalizerKubernetes {
			continue
		}
		errs = append(errs, apimachineryvalidation.ValidateFinalizerName(string(f), p)...)
		if !strings.Contains(string(f), "/") && f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			errs = append(errs, field.Invalid(p, string(f), "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}
