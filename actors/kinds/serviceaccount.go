package kinds

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var serviceAccounts = &Resource{
	Name:         "serviceaccounts",
	SingularName: "serviceaccount",
	Kind:         "ServiceAccount",
	ShortNames:   []string{"sa"},
	Namespaced:   true,
	Verbs:        verbsAll,
	Stored:       true,

	New:     func() runtime.Object { return &corev1.ServiceAccount{} },
	NewList: func() runtime.Object { return &corev1.ServiceAccountList{} },

	Validate: validator(func(sa *corev1.ServiceAccount) field.ErrorList {
		return validateMeta(&sa.ObjectMeta, true, nameDNSSubdomain)
	}),
	ValidateUpdate: updateValidator(func(sa, old *corev1.ServiceAccount) field.ErrorList {
		return validateMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta)
	}),
	Fields: fieldSetter(func(sa *corev1.ServiceAccount) fields.Set { return metaFields(&sa.ObjectMeta, nil) }),
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Secrets", Type: "string", Description: corev1.ServiceAccount{}.SwaggerDoc()["secrets"]},
		ageColumn,
	},
	RowAt: rower(func(sa *corev1.ServiceAccount, now time.Time) []interface{} {
		return []interface{}{sa.Name, int64(len(sa.Secrets)), HumanAge(sa.CreationTimestamp, now)}
	}),
}
