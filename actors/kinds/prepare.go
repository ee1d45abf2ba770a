package kinds

import (
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// PrepareCreate readies a new object of r, in place, the same way whoever creates it
// (the API, a controller): the system fields (uid, creationTimestamp; no namespace for
// a cluster-scoped kind; no resourceVersion, deletion fields or selfLink), the kind's
// defaults and create-time preparation, then its validation, whose failure is the
// API's 422 Invalid.
func PrepareCreate(r *Resource, obj runtime.Object, uid types.UID, now time.Time) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("prepare %s: %w", r.SingularName, err)
	}
	if !r.Namespaced {
		m.SetNamespace("")
	}
	m.SetUID(uid)
	m.SetCreationTimestamp(metav1.NewTime(now))
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
	if r.Default != nil {
		r.Default(obj)
	}
	if r.PrepareForCreate != nil {
		r.PrepareForCreate(obj)
	}
	if r.Validate != nil {
		if errs := r.Validate(obj); len(errs) > 0 {
			return apierrors.NewInvalid(schema.GroupKind{Kind: r.Kind}, m.GetName(), errs)
		}
	}
	return nil
}

// UpdateMode says how an update is prepared.
type UpdateMode int

// The update modes.
const (
	UpdateMain   UpdateMode = iota // the resource itself: PrepareForUpdate, ValidateUpdate
	UpdateStatus                   // the status subresource: PrepareForStatusUpdate, ValidateStatusUpdate (or ValidateUpdate)
	UpdateRaw                      // a subresource that changed exactly what it may (binding, finalize): no preparation, no validation
)

// PrepareUpdate readies obj, in place, to replace old (stored at rev): its
// resourceVersion becomes rev; in UpdateMain it keeps old's generation, uid (unless
// it names one), creationTimestamp and deletion fields; then the mode's preparation
// and the kind's update validation, whose failure is the API's 422 Invalid.
// old is only read, and what obj takes of it is copied: old may be the stored
// object, which the store shares with every reader.
func PrepareUpdate(r *Resource, mode UpdateMode, obj, old runtime.Object, rev int64) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("prepare %s: %w", r.SingularName, err)
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return fmt.Errorf("prepare %s: %w", r.SingularName, err)
	}
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	switch mode {
	case UpdateRaw:
		return nil
	case UpdateStatus:
		if r.PrepareForStatusUpdate != nil {
			r.PrepareForStatusUpdate(obj, old)
		}
	default:
		m.SetGeneration(om.GetGeneration())
		if m.GetUID() == "" {
			m.SetUID(om.GetUID())
		}
		m.SetCreationTimestamp(om.GetCreationTimestamp())
		m.SetDeletionTimestamp(om.GetDeletionTimestamp().DeepCopy())
		var grace *int64
		if g := om.GetDeletionGracePeriodSeconds(); g != nil {
			grace = new(int64)
			*grace = *g
		}
		m.SetDeletionGracePeriodSeconds(grace)
		if r.PrepareForUpdate != nil {
			r.PrepareForUpdate(obj, old)
		}
	}
	validate := r.ValidateUpdate
	if mode == UpdateStatus && r.ValidateStatusUpdate != nil {
		validate = r.ValidateStatusUpdate
	}
	if validate != nil {
		if errs := validate(obj, old); len(errs) > 0 {
			return apierrors.NewInvalid(schema.GroupKind{Kind: r.Kind}, m.GetName(), errs)
		}
	}
	return nil
}
