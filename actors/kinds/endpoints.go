package kinds

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var endpoints = &Resource{
	Name:         "endpoints",
	SingularName: "endpoints",
	Kind:         "Endpoints",
	ShortNames:   []string{"ep"},
	Namespaced:   true,
	Verbs:        verbsAll,
	Stored:       true,
	Controller:   "endpoint-controller",

	New:     func() runtime.Object { return &corev1.Endpoints{} },
	NewList: func() runtime.Object { return &corev1.EndpointsList{} },

	Default: defaulter(func(e *corev1.Endpoints) {
		for i := range e.Subsets {
			for j := range e.Subsets[i].Ports {
				if p := &e.Subsets[i].Ports[j]; p.Protocol == "" {
					p.Protocol = corev1.ProtocolTCP
				}
			}
		}
	}),
	Validate: validator(func(e *corev1.Endpoints) field.ErrorList {
		return append(validateMeta(&e.ObjectMeta, true, nameDNSSubdomain), validateSubsets(e.Subsets, field.NewPath("subsets"))...)
	}),
	ValidateUpdate: updateValidator(func(e, old *corev1.Endpoints) field.ErrorList {
		return append(validateMetaUpdate(&e.ObjectMeta, &old.ObjectMeta), validateSubsets(e.Subsets, field.NewPath("subsets"))...)
	}),
	Fields: fieldSetter(func(e *corev1.Endpoints) fields.Set { return metaFields(&e.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		ageColumn,
	},
	RowAt: rower(func(e *corev1.Endpoints, now time.Time) []interface{} {
		return []interface{}{e.Name, formatEndpoints(e), HumanAge(e.CreationTimestamp, now)}
	}),
}

func validateSubsets(subsets []corev1.EndpointSubset, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range subsets {
		idx := fldPath.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(idx, "must specify `addresses` or `notReadyAddresses`"))
		}
		for _, l := range []struct {
			list  string
			addrs []corev1.EndpointAddress
		}{{"addresses", ss.Addresses}, {"notReadyAddresses", ss.NotReadyAddresses}} {
			list := l.list
			for j, a := range l.addrs {
				errs = append(errs, validation.IsValidIP(idx.Child(list).Index(j).Child("ip"), a.IP)...)
				if a.Hostname != "" {
					for _, msg := range validation.IsDNS1123Label(a.Hostname) {
						errs = append(errs, field.Invalid(idx.Child(list).Index(j).Child("hostname"), a.Hostname, msg))
					}
				}
			}
		}
		for j, p := range ss.Ports {
			pp := idx.Child("ports").Index(j)
			if p.Name == "" {
				if len(ss.Ports) > 1 {
					errs = append(errs, field.Required(pp.Child("name"), ""))
				}
			} else {
				for _, msg := range validation.IsDNS1123Label(p.Name) {
					errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
				}
			}
			for _, msg := range validation.IsValidPortNum(int(p.Port)) {
				errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
			}
			errs = append(errs, validateEnum(string(p.Protocol), supportedProtocols, pp.Child("protocol"))...)
		}
	}
	return errs
}

// formatEndpoints renders up to three endpoints and how many more there are:
// "10.0.0.1:80,10.0.0.2:80 + 1 more...", or "<none>".
func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return noneCell
	}
	const max = 3
	var list []string
	more := false
	count := 0
	add := func(s string) {
		if len(list) == max {
			more = true
			return
		}
		list = append(list, s)
	}
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	out := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", out, count-max)
	}
	return out
}
