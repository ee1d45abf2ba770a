package kinds

import (
	"iter"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var pods = &Resource{
	Name:                "pods",
	SingularName:        "pod",
	Kind:                "Pod",
	ShortNames:          []string{"po"},
	Namespaced:          true,
	Verbs:               verbsAll,
	Subresources:        []string{"attach", "binding", "exec", "log", "portforward", "proxy", "status"},
	Stored:              true,
	DeleteReturnsObject: true,

	New:     func() runtime.Object { return &corev1.Pod{} },
	NewList: func() runtime.Object { return &corev1.PodList{} },

	Default:                defaulter(defaultPod),
	PrepareForCreate:       defaulter(preparePodCreate),
	PrepareForUpdate:       updater(preparePodUpdate),
	PrepareForStatusUpdate: updater(preparePodStatusUpdate),
	Validate:               validator(validatePod),
	ValidateUpdate:         updateValidator(validatePodUpdate),
	ValidateStatusUpdate:   statusKeepsMeta,
	Fields:                 fieldSetter(podFields),
	Columns:                podColumns,
	RowAt:                  rower(podRow),
}

func preparePodCreate(pod *corev1.Pod) {
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: QOSClass(&pod.Spec)}
	pod.Generation = 1
}

func preparePodUpdate(pod, old *corev1.Pod) {
	pod.Status = *old.Status.DeepCopy()
	bumpGeneration(&pod.ObjectMeta, &old.ObjectMeta, !equality.Semantic.DeepEqual(pod.Spec, old.Spec))
}

func preparePodStatusUpdate(pod, old *corev1.Pod) {
	keepMetaForStatus(&pod.ObjectMeta, &old.ObjectMeta)
	pod.Spec = *old.Spec.DeepCopy()
}

func validatePod(pod *corev1.Pod) field.ErrorList {
	errs := validateMeta(&pod.ObjectMeta, true, nameDNSSubdomain)
	return append(errs, validatePodSpec(&pod.Spec, field.NewPath("spec"))...)
}

// podUpdateForbiddenMsg is the real API server's message for a pod update that
// changes an immutable part of the spec.
const podUpdateForbiddenMsg = "pod updates may not change fields other than `spec.containers[*].image`," +
	"`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`," +
	"`spec.tolerations` (only additions to existing tolerations)," +
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

func validatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePodSpec(&pod.Spec, specPath)...)

	// An out-of-range value is reported by validatePodSpec.
	if pod.Spec.ActiveDeadlineSeconds != nil {
		v := *pod.Spec.ActiveDeadlineSeconds
		if v <= math.MaxInt32 && old.Spec.ActiveDeadlineSeconds != nil && *old.Spec.ActiveDeadlineSeconds < v {
			errs = append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), v, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	// Munge the mutable fields of the new spec into a copy of the old one; any
	// difference left is a forbidden change.
	munged := pod.Spec.DeepCopy()
	if len(munged.Containers) == len(old.Spec.Containers) {
		for i := range munged.Containers {
			munged.Containers[i].Image = old.Spec.Containers[i].Image
		}
	}
	if len(munged.InitContainers) == len(old.Spec.InitContainers) {
		for i := range munged.InitContainers {
			munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
		}
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	if tolerationsAdded(old.Spec.Tolerations, munged.Tolerations) {
		munged.Tolerations = old.Spec.Tolerations
	}
	if g, og := munged.TerminationGracePeriodSeconds, old.Spec.TerminationGracePeriodSeconds; g != nil && *g == 1 && og != nil && *og < 0 {
		munged.TerminationGracePeriodSeconds = og
	}
	if !equality.Semantic.DeepEqual(*munged, old.Spec) {
		msg := podUpdateForbiddenMsg
		if changed := changedSpecFields(&old.Spec, munged); len(changed) > 0 {
			msg += "\n  changed: " + strings.Join(changed, ", ")
		}
		errs = append(errs, field.Forbidden(specPath, msg))
	}
	return errs
}

// tolerationsAdded reports whether next keeps every toleration of prev (in
// any order), i.e. it only adds.
func tolerationsAdded(prev, next []corev1.Toleration) bool {
	used := make([]bool, len(next))
	for _, p := range prev {
		found := false
		for j, n := range next {
			if !used[j] && equality.Semantic.DeepEqual(p, n) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// changedSpecFields names the top-level pod spec fields that differ, to help
// the user see which part of a forbidden update is at fault.
func changedSpecFields(a, b *corev1.PodSpec) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := 0; i < va.NumField(); i++ {
		if !equality.Semantic.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, "spec."+strings.Split(va.Type().Field(i).Tag.Get("json"), ",")[0])
		}
	}
	sort.Strings(out)
	return out
}

func podFields(pod *corev1.Pod) fields.Set {
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	} else {
		podIP = pod.Status.PodIP
	}
	return metaFields(&pod.ObjectMeta, fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             podIP,
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	})
}

// allContainers yields the init containers, then the containers, without copying them.
func allContainers(spec *corev1.PodSpec) iter.Seq[*corev1.Container] {
	return func(yield func(*corev1.Container) bool) {
		for _, list := range [2][]corev1.Container{spec.InitContainers, spec.Containers} {
			for i := range list {
				if !yield(&list[i]) {
					return
				}
			}
		}
	}
}

// QOSClass computes the quality-of-service class from requests and limits
// of cpu and memory: BestEffort when none is set, Guaranteed when every
// container limits both and requests equal limits, Burstable otherwise.
func QOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	for c := range allContainers(spec) {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() {
				add := q.DeepCopy()
				if prev, ok := requests[name]; ok {
					add.Add(prev)
				}
				requests[name] = add
			}
		}
		found := 0
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Limits[name]; ok && !q.IsZero() {
				found++
				add := q.DeepCopy()
				if prev, ok := limits[name]; ok {
					add.Add(prev)
				}
				limits[name] = add
			}
		}
		if found != 2 {
			guaranteed = false
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
