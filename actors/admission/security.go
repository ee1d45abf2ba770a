package admission

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodReader reads pods (the actors' implementation reads the store).
type PodReader interface {
	// Pod returns the pod namespace/name; found is false when there is none.
	Pod(namespace, name string) (pod *corev1.Pod, found bool, err error)
}

// SecurityContextDeny refuses pods that set the security context fields v1.0's plugin
// of that name refused: a container's or the pod's seLinuxOptions and runAsUser, the
// pod's supplementalGroups and fsGroup (403 Forbidden).
type SecurityContextDeny struct{}

// DenyExecOnPrivileged refuses exec and attach into a pod that has a privileged
// container (403 Forbidden).
type DenyExecOnPrivileged struct{ pods PodReader }

// PrivilegedPolicy refuses privileged containers in pods, pod templates and
// replication controllers' templates, as v1.0's validation did when the server ran
// without --allow-privileged: 422 Invalid, `...privileged: Forbidden: disallowed by
// cluster policy`. It is no --admission-control plugin: the server puts it first
// in the chain unless --allow-privileged is set.
type PrivilegedPolicy struct{}

var (
	_ Plugin = SecurityContextDeny{}
	_ Plugin = (*DenyExecOnPrivileged)(nil)
	_ Plugin = PrivilegedPolicy{}
)

// Name is the plugin's name in the --admission-control list.
func (SecurityContextDeny) Name() string { return "SecurityContextDeny" }

// Admit refuses a pod create or update that sets a forbidden field.
func (SecurityContextDeny) Admit(a *Attributes) error {
	if a.Resource != "pods" || a.Subresource != "" || (a.Operation != Create && a.Operation != Update) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if reason := deniedSecurityContext(&pod.Spec); reason != "" {
		return apierrors.NewForbidden(schema.GroupResource{Resource: a.Resource}, a.Name, errors.New(reason))
	}
	return nil
}

// deniedSecurityContext names the first field of spec SecurityContextDeny refuses,
// in the words of Kubernetes' plugin; "" when there is none.
func deniedSecurityContext(spec *corev1.PodSpec) string {
	if sc := spec.SecurityContext; sc != nil {
		switch {
		case len(sc.SupplementalGroups) > 0:
			return "SecurityContext.SupplementalGroups is forbidden"
		case sc.SELinuxOptions != nil:
			return "pod.Spec.SecurityContext.SELinuxOptions is forbidden"
		case sc.RunAsUser != nil:
			return "pod.Spec.SecurityContext.RunAsUser is forbidden"
		case sc.FSGroup != nil:
			return "SecurityContext.FSGroup is forbidden"
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if sc := c.SecurityContext; sc != nil {
			switch {
			case sc.SELinuxOptions != nil:
				return "SecurityContext.SELinuxOptions is forbidden"
			case sc.RunAsUser != nil:
				return "SecurityContext.RunAsUser is forbidden"
			}
		}
	}
	return ""
}

// NewDenyExecOnPrivileged returns the plugin.
func NewDenyExecOnPrivileged(pods PodReader) *DenyExecOnPrivileged {
	return &DenyExecOnPrivileged{pods: pods}
}

// Name is the plugin's name in the --admission-control list.
func (*DenyExecOnPrivileged) Name() string { return "DenyExecOnPrivileged" }

// Admit refuses a connection to pods/exec or pods/attach of a privileged pod. A
// missing pod is admitted: the connection answers 404 itself.
func (d *DenyExecOnPrivileged) Admit(a *Attributes) error {
	if a.Operation != Connect || a.Resource != "pods" || (a.Subresource != "exec" && a.Subresource != "attach") {
		return nil
	}
	pod, found, err := d.pods.Pod(a.Namespace, a.Name)
	switch {
	case err != nil:
		return fmt.Errorf("admission: read pod %s/%s: %w", a.Namespace, a.Name, err)
	case found && privilegedPath(&pod.Spec, nil) != nil:
		return forbidden(a, errors.New("cannot exec into or attach to a privileged container"))
	}
	return nil
}

// Name names the policy.
func (PrivilegedPolicy) Name() string { return "PrivilegedPolicy" }

// Admit refuses the create or update of a pod, pod template or replication
// controller whose pod spec has a privileged container.
func (PrivilegedPolicy) Admit(a *Attributes) error {
	if a.Subresource != "" || (a.Operation != Create && a.Operation != Update) {
		return nil
	}
	var (
		spec *corev1.PodSpec
		path = field.NewPath("spec")
		kind string
	)
	switch o := a.Object.(type) {
	case *corev1.Pod:
		spec, kind = &o.Spec, "Pod"
	case *corev1.PodTemplate:
		spec, path, kind = &o.Template.Spec, field.NewPath("template", "spec"), "PodTemplate"
	case *corev1.ReplicationController:
		if o.Spec.Template == nil {
			return nil
		}
		spec, path, kind = &o.Spec.Template.Spec, path.Child("template", "spec"), "ReplicationController"
	default:
		return nil
	}
	if p := privilegedPath(spec, path); p != nil {
		return apierrors.NewInvalid(schema.GroupKind{Kind: kind}, a.Name,
			field.ErrorList{field.Forbidden(p, "disallowed by cluster policy")})
	}
	return nil
}

// privilegedPath returns the path, under path, of the first privileged container's
// privileged field in spec; nil when no container is privileged.
func privilegedPath(spec *corev1.PodSpec, path *field.Path) *field.Path {
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range list.containers {
			if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				if path == nil {
					path = field.NewPath("spec")
				}
				return path.Child(list.name).Index(i).Child("securityContext", "privileged")
			}
		}
	}
	return nil
}
