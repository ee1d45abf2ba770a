package admission

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/resourcequota"
)

// QuotaCharger charges the quotas of a namespace for a create (the actors'
// implementation asks each quota's actor, which is the only writer of its usage, and
// waits for its answer). It returns nil once every quota has durably counted obj,
// or the first refusal (403 Forbidden). With dryRun it only decides.
type QuotaCharger interface {
	Charge(namespace, resource string, obj runtime.Object, dryRun bool) error
}

// ResourceQuota enforces the namespaces' quotas (the book's ResourceQuota plugin):
// a create of a counted kind (pods, services, replicationcontrollers,
// resourcequotas, secrets, persistentvolumeclaims) is charged to every quota of its
// namespace, atomically per quota, and refused when one is used up; a pod without
// cpu or memory limits is refused where a quota covers them. Deletes release their
// usage at the quota's next recount.
type ResourceQuota struct {
	quotas QuotaCharger
}

var _ Plugin = (*ResourceQuota)(nil)

// NewResourceQuota returns the plugin, charging through quotas.
func NewResourceQuota(quotas QuotaCharger) *ResourceQuota { return &ResourceQuota{quotas: quotas} }

// Charger is what the plugin charges through (the actors bind theirs to the system
// that runs the chain).
func (q *ResourceQuota) Charger() QuotaCharger { return q.quotas }

// Name is the plugin's name in the book's --admission-control list.
func (*ResourceQuota) Name() string { return "ResourceQuota" }

// Admit charges creates of the counted kinds to the quotas of their namespace.
func (q *ResourceQuota) Admit(a *Attributes) error {
	if a.Operation != Create || a.Subresource != "" || a.Namespace == "" || !resourcequota.Counts(a.Resource) {
		return nil
	}
	err := q.quotas.Charge(a.Namespace, a.Resource, a.Object, a.DryRun)
	if err == nil {
		return nil
	}
	if st := apierrors.APIStatus(nil); errors.As(err, &st) {
		return err
	}
	return fmt.Errorf("admission: resource quota of %s/%s: %w", a.Namespace, a.Name, err)
}
