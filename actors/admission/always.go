package admission

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// AlwaysAdmit admits every request.
type AlwaysAdmit struct{}

// AlwaysDeny refuses every request (for tests), with v1.0's 403.
type AlwaysDeny struct{}

var (
	_ Plugin = AlwaysAdmit{}
	_ Plugin = AlwaysDeny{}
)

// Name is the plugin's name in the --admission-control list.
func (AlwaysAdmit) Name() string { return "AlwaysAdmit" }

// Admit admits a.
func (AlwaysAdmit) Admit(*Attributes) error { return nil }

// Name is the plugin's name in the --admission-control list.
func (AlwaysDeny) Name() string { return "AlwaysDeny" }

// Admit refuses a.
func (AlwaysDeny) Admit(a *Attributes) error {
	//lint:ignore ST1005 v1.0's message
	return forbidden(a, errors.New("Admission control is denying all modifications"))
}

// forbidden is v1.0's admission.NewForbidden: a 403 naming the object by its kind,
// as in `Pod "web" is forbidden: ...`.
func forbidden(a *Attributes, err error) error {
	kind := a.Resource
	if r, ok := kinds.Lookup(a.Resource); ok {
		kind = r.Kind
	}
	return apierrors.NewForbidden(schema.GroupResource{Resource: kind}, a.Name, err)
}
