package kinds

import (
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var replicationControllers = &Resource{
	Name:                "replicationcontrollers",
	SingularName:        "replicationcontroller",
	Kind:                "ReplicationController",
	ShortNames:          []string{"rc"},
	Namespaced:          true,
	Verbs:               verbsAll,
	Subresources:        []string{"scale", "status"},
	Stored:              true,
	DeleteReturnsObject: true,
	Controller:          "replication-controller",

	New:     func() runtime.Object { return &corev1.ReplicationController{} },
	NewList: func() runtime.Object { return &corev1.ReplicationControllerList{} },

	Default:                defaulter(defaultRC),
	PrepareForCreate:       defaulter(prepareRCCreate),
	PrepareForUpdate:       updater(prepareRCUpdate),
	PrepareForStatusUpdate: updater(prepareRCStatusUpdate),
	Validate:               validator(validateRC),
	ValidateUpdate:         updateValidator(validateRCUpdate),
	Fields: fieldSetter(func(rc *corev1.ReplicationController) fields.Set {
		return metaFields(&rc.ObjectMeta, fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))})
	}),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
		ageColumn,
		{Name: "Containers", Type: "string", Priority: 1, Description: containersColumn},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesColumn},
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
	},
	RowAt: rower(func(rc *corev1.ReplicationController, now time.Time) []interface{} {
		desired := int64(1)
		if rc.Spec.Replicas != nil {
			desired = int64(*rc.Spec.Replicas)
		}
		names, images := templateContainers(rc.Spec.Template)
		return []interface{}{
			rc.Name, desired, int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), HumanAge(rc.CreationTimestamp, now),
			names, images, labels.FormatLabels(rc.Spec.Selector),
		}
	}),
}

// defaultRC: one replica; the selector defaults to the template's labels and
// the RC's own labels to them too when it has none.
func defaultRC(rc *corev1.ReplicationController) {
	if rc.Spec.Replicas == nil {
		one := int32(1)
		rc.Spec.Replicas = &one
	}
	if t := rc.Spec.Template; t != nil {
		if len(rc.Spec.Selector) == 0 && len(t.Labels) > 0 {
			rc.Spec.Selector = copyLabels(t.Labels)
		}
		if len(rc.Labels) == 0 && len(t.Labels) > 0 {
			rc.Labels = copyLabels(t.Labels)
		}
	}
	defaultPodTemplate(rc.Spec.Template)
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func prepareRCCreate(rc *corev1.ReplicationController) {
	rc.Status = corev1.ReplicationControllerStatus{}
	rc.Generation = 1
}

func prepareRCUpdate(rc, old *corev1.ReplicationController) {
	rc.Status = *old.Status.DeepCopy()
	bumpGeneration(&rc.ObjectMeta, &old.ObjectMeta, !equality.Semantic.DeepEqual(rc.Spec, old.Spec))
}

func prepareRCStatusUpdate(rc, old *corev1.ReplicationController) {
	keepMetaForStatus(&rc.ObjectMeta, &old.ObjectMeta)
	rc.Spec = *old.Spec.DeepCopy()
}

func validateRC(rc *corev1.ReplicationController) field.ErrorList {
	errs := validateMeta(&rc.ObjectMeta, true, nameDNSSubdomain)
	return append(errs, validateRCSpec(&rc.Spec, field.NewPath("spec"))...)
}

func validateRCUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	errs := validateMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
	return append(errs, validateRCSpec(&rc.Spec, field.NewPath("spec"))...)
}

func validateRCSpec(spec *corev1.ReplicationControllerSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Replicas == nil {
		errs = append(errs, field.Required(fldPath.Child("replicas"), ""))
	} else {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.Replicas), fldPath.Child("replicas"))...)
	}
	errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if len(spec.Selector) == 0 {
		errs = append(errs, field.Required(fldPath.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabels(spec.Selector, fldPath.Child("selector"))...)
	}
	errs = append(errs, validateControllerTemplate(spec.Template, spec.Selector, fldPath.Child("template"))...)
	return errs
}

// validateControllerTemplate validates the pod template of a controller: it
// must exist, its labels must match the selector, and its pods must restart.
func validateControllerTemplate(t *corev1.PodTemplateSpec, selector map[string]string, fldPath *field.Path) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	if len(selector) > 0 && !labels.SelectorFromSet(selector).Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(fldPath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplateSpec(t, fldPath)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(fldPath.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(fldPath.Child("spec", "activeDeadlineSeconds"), t.Spec.ActiveDeadlineSeconds, "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// validatePodTemplateSpec validates a template's labels, annotations and spec.
func validatePodTemplateSpec(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	metaPath := fldPath.Child("metadata")
	errs := metav1validation.ValidateLabels(t.Labels, metaPath.Child("labels"))
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(t.Annotations, metaPath.Child("annotations"))...)
	return append(errs, validatePodSpec(&t.Spec, fldPath.Child("spec"))...)
}

// templateContainers joins the names and the images of a template's containers.
func templateContainers(t *corev1.PodTemplateSpec) (names, images string) {
	if t == nil {
		return "", ""
	}
	var n, i []string
	for _, c := range t.Spec.Containers {
		n = append(n, c.Name)
		i = append(i, c.Image)
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}
