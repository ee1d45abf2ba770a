package kinds

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var supportedLimitTypes = []string{string(corev1.LimitTypeContainer), string(corev1.LimitTypePersistentVolumeClaim), string(corev1.LimitTypePod)}

var resourceQuotas = &Resource{
	Name:         "resourcequotas",
	SingularName: "resourcequota",
	Kind:         "ResourceQuota",
	ShortNames:   []string{"quota"},
	Namespaced:   true,
	Verbs:        verbsAll,
	Subresources: []string{"status"},
	Stored:       true,

	New:     func() runtime.Object { return &corev1.ResourceQuota{} },
	NewList: func() runtime.Object { return &corev1.ResourceQuotaList{} },

	PrepareForCreate: defaulter(func(q *corev1.ResourceQuota) { q.Status = corev1.ResourceQuotaStatus{} }),
	PrepareForUpdate: updater(func(q, old *corev1.ResourceQuota) { q.Status = *old.Status.DeepCopy() }),
	PrepareForStatusUpdate: updater(func(q, old *corev1.ResourceQuota) {
		keepMetaForStatus(&q.ObjectMeta, &old.ObjectMeta)
		q.Spec = *old.Spec.DeepCopy()
	}),
	Validate: validator(func(q *corev1.ResourceQuota) field.ErrorList {
		return append(validateMeta(&q.ObjectMeta, true, nameDNSSubdomain), validateQuota(q)...)
	}),
	ValidateUpdate: updateValidator(func(q, old *corev1.ResourceQuota) field.ErrorList {
		return append(validateMetaUpdate(&q.ObjectMeta, &old.ObjectMeta), validateQuota(q)...)
	}),
	Fields: fieldSetter(func(q *corev1.ResourceQuota) fields.Set { return metaFields(&q.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		ageColumn,
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
	},
	RowAt: rower(quotaRow),
}

func validateQuota(q *corev1.ResourceQuota) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateResourceList(q.Spec.Hard, field.NewPath("spec", "hard"))...)
	errs = append(errs, validateResourceList(q.Status.Hard, field.NewPath("status", "hard"))...)
	errs = append(errs, validateResourceList(q.Status.Used, field.NewPath("status", "used"))...)
	return errs
}

// validateResourceList checks names are qualified and quantities not negative.
func validateResourceList(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(list) {
		q := list[name]
		p := fldPath.Key(string(name))
		for _, msg := range validation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(p, name, msg))
		}
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), apimachineryvalidation.IsNegativeErrorMsg))
		}
	}
	return errs
}

// quotaRow lists "name: used/hard" per resource, limits.* under LIMIT and the
// rest under REQUEST.
func quotaRow(q *corev1.ResourceQuota, now time.Time) []interface{} {
	var request, limit []string
	for _, name := range sortedKeys(q.Status.Hard) {
		hard := q.Status.Hard[name]
		used := q.Status.Used[name]
		cell := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if strings.HasPrefix(string(name), "limits.") {
			limit = append(limit, cell)
		} else {
			request = append(request, cell)
		}
	}
	return []interface{}{q.Name, HumanAge(q.CreationTimestamp, now), strings.Join(request, ", "), strings.Join(limit, ", ")}
}

var limitRanges = &Resource{
	Name:         "limitranges",
	SingularName: "limitrange",
	Kind:         "LimitRange",
	ShortNames:   []string{"limits"},
	Namespaced:   true,
	Verbs:        verbsAll,
	Stored:       true,

	New:     func() runtime.Object { return &corev1.LimitRange{} },
	NewList: func() runtime.Object { return &corev1.LimitRangeList{} },

	Default: defaulter(func(lr *corev1.LimitRange) {
		for i := range lr.Spec.Limits {
			defaultLimitRangeItem(&lr.Spec.Limits[i])
		}
	}),
	Validate: validator(func(lr *corev1.LimitRange) field.ErrorList {
		return append(validateMeta(&lr.ObjectMeta, true, nameDNSSubdomain), validateLimitRange(lr)...)
	}),
	ValidateUpdate: updateValidator(func(lr, old *corev1.LimitRange) field.ErrorList {
		return append(validateMetaUpdate(&lr.ObjectMeta, &old.ObjectMeta), validateLimitRange(lr)...)
	}),
	Fields: fieldSetter(func(lr *corev1.LimitRange) fields.Set { return metaFields(&lr.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	RowAt: rower(func(lr *corev1.LimitRange, _ time.Time) []interface{} {
		return []interface{}{lr.Name, lr.CreationTimestamp.UTC().Format(time.RFC3339)}
	}),
}

// defaultLimitRangeItem: for containers the default limit falls back to max,
// the default request to the default limit, then to min.
func defaultLimitRangeItem(it *corev1.LimitRangeItem) {
	if it.Type != corev1.LimitTypeContainer {
		return
	}
	if it.Default == nil {
		it.Default = corev1.ResourceList{}
	}
	if it.DefaultRequest == nil {
		it.DefaultRequest = corev1.ResourceList{}
	}
	fill := func(dst, src corev1.ResourceList) {
		for k, v := range src {
			if _, ok := dst[k]; !ok {
				dst[k] = v.DeepCopy()
			}
		}
	}
	fill(it.Default, it.Max)
	fill(it.DefaultRequest, it.Default)
	fill(it.DefaultRequest, it.Min)
}

func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.LimitType]bool{}
	for i, it := range lr.Spec.Limits {
		idx := field.NewPath("spec", "limits").Index(i)
		if seen[it.Type] {
			errs = append(errs, field.Duplicate(idx.Child("type"), it.Type))
		}
		seen[it.Type] = true
		errs = append(errs, validateEnum(string(it.Type), supportedLimitTypes, idx.Child("type"))...)
		if it.Type == corev1.LimitTypePod {
			if len(it.Default) > 0 {
				errs = append(errs, field.Forbidden(idx.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(it.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(idx.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		}
		for _, l := range []struct {
			name string
			list corev1.ResourceList
		}{{"max", it.Max}, {"min", it.Min}, {"default", it.Default}, {"defaultRequest", it.DefaultRequest}, {"maxLimitRequestRatio", it.MaxLimitRequestRatio}} {
			errs = append(errs, validateResourceList(l.list, idx.Child(l.name))...)
		}
		for _, k := range sortedKeys(it.Min) {
			min := it.Min[k]
			if max, ok := it.Max[k]; ok && min.Cmp(max) > 0 {
				errs = append(errs, field.Invalid(idx.Child("min").Key(string(k)), min.String(), fmt.Sprintf("min value %s is greater than max value %s", min.String(), max.String())))
			}
		}
		for _, k := range sortedKeys(it.DefaultRequest) {
			req := it.DefaultRequest[k]
			errs = append(errs, limitBetween(req, "default request", it.Min, it.Max, k, idx.Child("defaultRequest").Key(string(k)))...)
			if def, ok := it.Default[k]; ok && req.Cmp(def) > 0 {
				errs = append(errs, field.Invalid(idx.Child("defaultRequest").Key(string(k)), req.String(), fmt.Sprintf("default request value %s is greater than default limit value %s", req.String(), def.String())))
			}
		}
		for _, k := range sortedKeys(it.Default) {
			errs = append(errs, limitBetween(it.Default[k], "default", it.Min, it.Max, k, idx.Child("default").Key(string(k)))...)
		}
	}
	return errs
}

func limitBetween(v resource.Quantity, what string, min, max corev1.ResourceList, k corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m, ok := min[k]; ok && m.Cmp(v) > 0 {
		errs = append(errs, field.Invalid(p, v.String(), fmt.Sprintf("min value %s is greater than %s value %s", m.String(), what, v.String())))
	}
	if m, ok := max[k]; ok && v.Cmp(m) > 0 {
		errs = append(errs, field.Invalid(p, v.String(), fmt.Sprintf("%s value %s is greater than max value %s", what, v.String(), m.String())))
	}
	return errs
}
