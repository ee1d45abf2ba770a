package actors

import (
	"fmt"

	"github.com/google/uuid"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// prepareNew gives an object a controller creates (a pod from an RC's template, an
// Endpoints, an Event) what the gateway gives a created one: uid, creationTimestamp,
// the kind's defaults and create-time preparation, then its validation.
func prepareNew(res string, obj runtime.Object, now time.Time) error {
	r, ok := kinds.Lookup(res)
	if !ok {
		return fmt.Errorf("no %s resource", res)
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return fmt.Errorf("%T has no metadata", obj)
	}
	m.SetUID(types.UID(uuid.NewString()))
	m.SetCreationTimestamp(metav1.NewTime(now))
	if r.Default != nil {
		r.Default(obj)
	}
	if r.PrepareForCreate != nil {
		r.PrepareForCreate(obj)
	}
	if r.Validate != nil {
		if errs := r.Validate(obj); len(errs) > 0 {
			return fmt.Errorf("prepare %s %s: %w", res, m.GetName(), errs.ToAggregate())
		}
	}
	return nil
}
