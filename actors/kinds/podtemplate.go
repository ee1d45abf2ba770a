package kinds

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var podTemplates = &Resource{
	Name:         "podtemplates",
	SingularName: "podtemplate",
	Kind:         "PodTemplate",
	Namespaced:   true,
	Verbs:        verbsAll,
	Stored:       true,

	New:     func() runtime.Object { return &corev1.PodTemplate{} },
	NewList: func() runtime.Object { return &corev1.PodTemplateList{} },

	Default:          defaulter(func(pt *corev1.PodTemplate) { defaultPodTemplate(&pt.Template) }),
	PrepareForCreate: defaulter(func(pt *corev1.PodTemplate) { pt.Generation = 1 }),
	PrepareForUpdate: updater(func(pt, old *corev1.PodTemplate) {
		bumpGeneration(&pt.ObjectMeta, &old.ObjectMeta, !equality.Semantic.DeepEqual(pt.Template, old.Template))
	}),
	Validate: validator(func(pt *corev1.PodTemplate) field.ErrorList {
		errs := validateMeta(&pt.ObjectMeta, true, nameDNSSubdomain)
		return append(errs, validatePodTemplateSpec(&pt.Template, field.NewPath("template"))...)
	}),
	ValidateUpdate: updateValidator(func(pt, old *corev1.PodTemplate) field.ErrorList {
		errs := validateMetaUpdate(&pt.ObjectMeta, &old.ObjectMeta)
		return append(errs, validatePodTemplateSpec(&pt.Template, field.NewPath("template"))...)
	}),
	Fields: fieldSetter(func(pt *corev1.PodTemplate) fields.Set { return metaFields(&pt.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Containers", Type: "string", Description: containersColumn},
		{Name: "Images", Type: "string", Description: imagesColumn},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	},
	RowAt: rower(func(pt *corev1.PodTemplate, _ time.Time) []interface{} {
		names, images := templateContainers(&pt.Template)
		return []interface{}{pt.Name, names, images, labels.FormatLabels(pt.Template.Labels)}
	}),
}
