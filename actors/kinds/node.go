package kinds

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	nodeRoleLabelPrefix = "node-role.kubernetes.io/"
	nodeRoleLabel       = "kubernetes.io/role"
)

var nodes = &Resource{
	Name:         "nodes",
	SingularName: "node",
	Kind:         "Node",
	ShortNames:   []string{"no"},
	Namespaced:   false,
	Verbs:        verbsAll,
	Subresources: []string{"proxy", "status"},
	Stored:       true,
	Controller:   "node-controller",

	New:     func() runtime.Object { return &corev1.Node{} },
	NewList: func() runtime.Object { return &corev1.NodeList{} },

	// Allocatable defaults to capacity.
	Default: defaulter(func(n *corev1.Node) {
		if n.Status.Allocatable == nil && n.Status.Capacity != nil {
			n.Status.Allocatable = n.Status.Capacity.DeepCopy()
		}
	}),
	// Nodes register with their status, so create keeps it; the main resource
	// cannot change it afterwards. An update that omits the pod CIDR keeps the one
	// allocated (a Node written by a client that does not know the field, such as the
	// book's node isolation file); changing it to another value stays forbidden.
	PrepareForUpdate: updater(func(n, old *corev1.Node) {
		old.Status.DeepCopyInto(&n.Status)
		if n.Spec.PodCIDR == "" && len(n.Spec.PodCIDRs) == 0 {
			n.Spec.PodCIDR, n.Spec.PodCIDRs = old.Spec.PodCIDR, slices.Clone(old.Spec.PodCIDRs)
		}
	}),
	PrepareForStatusUpdate: updater(func(n, old *corev1.Node) {
		keepMetaForStatus(&n.ObjectMeta, &old.ObjectMeta)
		old.Spec.DeepCopyInto(&n.Spec)
	}),
	Validate: validator(func(n *corev1.Node) field.ErrorList {
		return append(validateMeta(&n.ObjectMeta, false, nameDNSSubdomain), validateNodeSpec(&n.Spec)...)
	}),
	ValidateUpdate:       updateValidator(validateNodeUpdate),
	ValidateStatusUpdate: statusKeepsMeta,
	Fields: fieldSetter(func(n *corev1.Node) fields.Set {
		return metaFields(&n.ObjectMeta, fields.Set{"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)})
	}),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		ageColumn,
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	},
	RowAt: rower(nodeRow),
}

func validateNodeSpec(spec *corev1.NodeSpec) field.ErrorList {
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	if spec.PodCIDR != "" {
		errs = append(errs, validation.IsValidCIDR(specPath.Child("podCIDR"), spec.PodCIDR)...)
	}
	for i, c := range spec.PodCIDRs {
		errs = append(errs, validation.IsValidCIDR(specPath.Child("podCIDRs").Index(i), c)...)
	}
	seen := map[string]bool{}
	for i, t := range spec.Taints {
		idx := specPath.Child("taints").Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(idx.Child("key"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(idx.Child("key"), t.Key, msg))
			}
		}
		if t.Value != "" {
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(idx.Child("value"), t.Value, msg))
			}
		}
		errs = append(errs, validateEnum(string(t.Effect), supportedTaintEffects, idx.Child("effect"))...)
		k := t.Key + "/" + string(t.Effect)
		if seen[k] {
			errs = append(errs, field.Duplicate(idx, "taints must be unique by key and effect pair"))
		}
		seen[k] = true
	}
	return errs
}

func validateNodeUpdate(n, old *corev1.Node) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateMetaUpdate(&n.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateNodeSpec(&n.Spec)...)
	if old.Spec.PodCIDR != "" && n.Spec.PodCIDR != old.Spec.PodCIDR {
		errs = append(errs, field.Forbidden(specPath.Child("podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	if old.Spec.ProviderID != "" && n.Spec.ProviderID != old.Spec.ProviderID {
		errs = append(errs, field.Forbidden(specPath.Child("providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	return errs
}

func nodeRow(n *corev1.Node, now time.Time) []interface{} {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = append(status, string(c.Type))
		} else {
			status = append(status, "Not"+string(c.Type))
		}
		break
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	roles := strings.Join(nodeRoles(n), ",")
	if roles == "" {
		roles = noneCell
	}
	info := n.Status.NodeInfo
	orUnknown := func(s string) string {
		if s == "" {
			return unknownCell
		}
		return s
	}
	return []interface{}{
		n.Name, strings.Join(status, ","), roles, HumanAge(n.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP),
		orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
	}
}

// nodeRoles reads roles from node-role.kubernetes.io/<role> and
// kubernetes.io/role labels, sorted.
func nodeRoles(n *corev1.Node) []string {
	roles := sets.New[string]()
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, nodeRoleLabelPrefix):
			if r := strings.TrimPrefix(k, nodeRoleLabelPrefix); r != "" {
				roles.Insert(r)
			}
		case k == nodeRoleLabel && v != "":
			roles.Insert(v)
		}
	}
	out := roles.UnsortedList()
	sort.Strings(out)
	return out
}

func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return noneCell
}

// ServiceProxyAnnotation marks a node whose service proxy runs (the agent's own, or
// kube-proxy beside a kubelet), with its mode: a LoadBalancer service's ingress
// addresses are those of the Ready nodes that carry it (actors/service), and the
// proxy writes it while it runs and takes it away when it stops (nodeagent/proxy).
const ServiceProxyAnnotation = "kubeactor.io/service-proxy"
