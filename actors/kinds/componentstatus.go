package kinds

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// componentStatuses is read-only: the server computes them by probing the
// control plane's components.
var componentStatuses = &Resource{
	Name:         "componentstatuses",
	SingularName: "componentstatus",
	Kind:         "ComponentStatus",
	ShortNames:   []string{"cs"},
	Namespaced:   false,
	Verbs:        verbsReadOnly,

	New:     func() runtime.Object { return &corev1.ComponentStatus{} },
	NewList: func() runtime.Object { return &corev1.ComponentStatusList{} },

	Fields: fieldSetter(func(cs *corev1.ComponentStatus) fields.Set { return metaFields(&cs.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "Status of the component conditions"},
		{Name: "Message", Type: "string", Description: "Message of the component conditions"},
		{Name: "Error", Type: "string", Description: "Error of the component conditions"},
	},
	RowAt: rower(func(cs *corev1.ComponentStatus, _ time.Time) []interface{} {
		status, message, errMsg := "Unknown", "", ""
		for _, c := range cs.Conditions {
			if c.Type != corev1.ComponentHealthy {
				continue
			}
			status = "Unhealthy"
			if c.Status == corev1.ConditionTrue {
				status = "Healthy"
			}
			message, errMsg = c.Message, c.Error
			break
		}
		return []interface{}{cs.Name, status, message, errMsg}
	}),
}
