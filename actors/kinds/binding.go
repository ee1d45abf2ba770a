package kinds

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// bindings is create-only: a Binding assigns the pod of its name to a node
// (the scheduler's write). It has no list, no columns and no field selectors.
var bindings = &Resource{
	Name:         "bindings",
	SingularName: "binding",
	Kind:         "Binding",
	Namespaced:   true,
	Verbs:        verbsCreateOnly,

	New:      func() runtime.Object { return &corev1.Binding{} },
	Validate: validator(validateBinding),
}

// validateBinding validates a Binding, whether posted to bindings or to a pod's
// binding subresource: the target must name a Node.
func validateBinding(b *corev1.Binding) field.ErrorList {
	var errs field.ErrorList
	if b.Name == "" {
		errs = append(errs, field.Required(metaPath.Child("name"), "name or generateName is required"))
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	return errs
}
