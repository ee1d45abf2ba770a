package kinds

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits the real API server puts on events.
const (
	maxEventMessageBytes = 4 * 1024
	maxEventReasonLength = 128
)

var events = &Resource{
	Name:         "events",
	SingularName: "event",
	Kind:         "Event",
	ShortNames:   []string{"ev"},
	Namespaced:   true,
	Verbs:        verbsAll,
	Stored:       true,

	New:     func() runtime.Object { return &corev1.Event{} },
	NewList: func() runtime.Object { return &corev1.EventList{} },

	Validate: validator(func(e *corev1.Event) field.ErrorList {
		return append(validateMeta(&e.ObjectMeta, true, nameDNSSubdomain), validateEvent(e)...)
	}),
	ValidateUpdate: updateValidator(func(e, old *corev1.Event) field.ErrorList {
		return append(validateMetaUpdate(&e.ObjectMeta, &old.ObjectMeta), validateEvent(e)...)
	}),
	Fields: fieldSetter(eventFields),
	Columns: []metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
		{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
		{Name: "Object", Type: "string", Description: "The object that this event is about."},
		{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
		{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	},
	RowAt: rower(eventRow),
}

func validateEvent(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	// An event about a namespaced object lives in that object's namespace.
	if e.InvolvedObject.Namespace != "" && e.InvolvedObject.Namespace != e.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if len(e.Reason) > maxEventReasonLength {
		errs = append(errs, field.TooLong(field.NewPath("reason"), "", maxEventReasonLength))
	}
	if len(e.Message) > maxEventMessageBytes {
		errs = append(errs, field.TooLong(field.NewPath("message"), "", maxEventMessageBytes))
	}
	if e.Type != "" && e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.NotSupported(field.NewPath("type"), e.Type, []string{corev1.EventTypeNormal, corev1.EventTypeWarning}))
	}
	return errs
}

func eventFields(e *corev1.Event) fields.Set {
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return metaFields(&e.ObjectMeta, fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	})
}

func eventRow(e *corev1.Event, now time.Time) []interface{} {
	first := HumanAge(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = HumanAge(metav1.Time{Time: e.EventTime.Time}, now)
	}
	last := HumanAge(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = HumanAge(metav1.Time{Time: e.Series.LastObservedTime.Time}, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, e.InvolvedObject.Name)
	}
	component, instance := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if instance == "" {
		instance = e.ReportingInstance
	}
	source := component
	if instance != "" {
		source += ", " + instance
	}
	return []interface{}{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source,
		strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}
}
