package admission

import (
	"errors"
	"fmt"
	"github.com/kubeactor/kubeactor/actors/kinds"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// LimitRangeReader reads a namespace's LimitRanges (the actors' implementation reads
// the store).
type LimitRangeReader interface {
	// LimitRanges returns the LimitRanges of namespace, by name.
	LimitRanges(namespace string) ([]*corev1.LimitRange, error)
}

// LimitRanger applies the LimitRanges of a pod's namespace to the pod being created:
// a Container item's default limits and default requests go to the containers that
// set none, then every item's min, max and maxLimitRequestRatio are checked, per
// container (type Container) and over the pod's containers summed (type Pod). A
// refusal is 403 with v1.0's message (`Pod "web" is forbidden: Maximum memory usage
// per pod is 1Gi`). Updates are left alone: a pod's resources cannot change.
type LimitRanger struct{ ranges LimitRangeReader }

var _ Plugin = (*LimitRanger)(nil)

// NewLimitRanger returns the plugin.
func NewLimitRanger(ranges LimitRangeReader) *LimitRanger { return &LimitRanger{ranges: ranges} }

// Name is the plugin's name in the --admission-control list.
func (*LimitRanger) Name() string { return "LimitRanger" }

// Admit defaults and checks a pod create.
func (l *LimitRanger) Admit(a *Attributes) error {
	if a.Operation != Create || a.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	ranges, err := l.ranges.LimitRanges(a.Namespace)
	if err != nil {
		//lint:ignore ST1005 v1.0's message
		return forbidden(a, fmt.Errorf("Unable to %s %s at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	for _, lr := range ranges {
		applyDefaults(lr, pod)
		if reason := checkLimits(lr, pod); reason != "" {
			return forbidden(a, errors.New(reason))
		}
	}
	if len(ranges) > 0 {
		pod.Status.QOSClass = kinds.QOSClass(&pod.Spec) // the defaults may change it
	}
	return nil
}

// limited are the resources a LimitRange constrains, in the order they are checked.
var limited = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// applyDefaults gives each container of pod the Container items' default limits and
// requests for the resources it sets none of. A limit the container sets is its
// request when it sets none (as the API's defaulting does), never the default
// request, which could exceed it.
func applyDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for i := range pod.Spec.Containers {
			r := &pod.Spec.Containers[i].Resources
			r.Requests = withDefaults(r.Requests, r.Limits)
			r.Limits = withDefaults(r.Limits, item.Default)
			r.Requests = withDefaults(r.Requests, item.DefaultRequest)
		}
	}
}

// withDefaults returns list with the values of defaults it has none of.
func withDefaults(list, defaults corev1.ResourceList) corev1.ResourceList {
	for name, q := range defaults {
		if _, set := list[name]; set {
			continue
		}
		if list == nil {
			list = corev1.ResourceList{}
		}
		list[name] = q.DeepCopy()
	}
	return list
}

// checkLimits returns why pod breaks an item of lr, in v1.0's words; "" when it
// does not.
func checkLimits(lr *corev1.LimitRange, pod *corev1.Pod) string {
	for _, item := range lr.Spec.Limits {
		var (
			scope string
			usage []corev1.ResourceRequirements // what each bound is checked against
		)
		switch item.Type {
		case corev1.LimitTypeContainer:
			scope = "container"
			for _, c := range pod.Spec.Containers {
				usage = append(usage, c.Resources)
			}
		case corev1.LimitTypePod:
			scope, usage = "pod", []corev1.ResourceRequirements{podUsage(pod)}
		default:
			continue
		}
		for _, u := range usage {
			if reason := checkItem(item, scope, u); reason != "" {
				return reason
			}
		}
	}
	return ""
}

// podUsage sums the limits and the requests of pod's containers.
func podUsage(pod *corev1.Pod) corev1.ResourceRequirements {
	sum := corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}
	for _, c := range pod.Spec.Containers {
		for _, name := range limited {
			add(sum.Limits, name, c.Resources.Limits)
			add(sum.Requests, name, c.Resources.Requests)
		}
	}
	return sum
}

func add(sum corev1.ResourceList, name corev1.ResourceName, from corev1.ResourceList) {
	q, ok := from[name]
	if !ok {
		return
	}
	total := sum[name]
	total.Add(q)
	sum[name] = total
}

// checkItem checks one container's (or the pod's summed) resources u against item:
// every minimum against the request (the limit when no request is set), then every
// maximum against the limit, then the limit to request ratios.
func checkItem(item corev1.LimitRangeItem, scope string, u corev1.ResourceRequirements) string {
	for _, name := range limited {
		if lo, ok := item.Min[name]; ok {
			if used := request(u, name); used.Cmp(lo) < 0 {
				return fmt.Sprintf("Minimum %s usage per %s is %s", spelled(name), scope, lo.String())
			}
		}
	}
	for _, name := range limited {
		hi, ok := item.Max[name]
		limit, hasLimit := u.Limits[name]
		if !ok || !hasLimit || limit.Cmp(hi) <= 0 {
			continue
		}
		if name == corev1.ResourceCPU && scope == "pod" {
			return fmt.Sprintf("Maximum %s usage per %s is %s, but requested %s", spelled(name), scope, hi.String(), limit.String())
		}
		return fmt.Sprintf("Maximum %s usage per %s is %s", spelled(name), scope, hi.String())
	}
	for _, name := range limited {
		ratio, ok := item.MaxLimitRequestRatio[name]
		limit, hasLimit := u.Limits[name]
		if !ok || !hasLimit {
			continue
		}
		req, requested := u.Requests[name]
		if !requested || req.IsZero() {
			return fmt.Sprintf("Maximum %s limit to request ratio per %s is %s, but no request is specified or request is 0", spelled(name), scope, ratio.String())
		}
		if observed := float64(limit.MilliValue()) / float64(req.MilliValue()); observed > float64(ratio.MilliValue())/1000 {
			return fmt.Sprintf("Maximum %s limit to request ratio per %s is %s, but provided ratio is %f", spelled(name), scope, ratio.String(), observed)
		}
	}
	return ""
}

// request is what a minimum is checked against: the request, else the limit, else 0.
func request(u corev1.ResourceRequirements, name corev1.ResourceName) resource.Quantity {
	if q, ok := u.Requests[name]; ok {
		return q
	}
	return u.Limits[name]
}

// spelled is how v1.0's messages name a resource.
func spelled(name corev1.ResourceName) string {
	if name == corev1.ResourceCPU {
		return "CPU"
	}
	return string(name)
}
