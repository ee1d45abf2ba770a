package resourcequota

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/pod"
)

// counted maps each resource a quota counts to the name of its count in spec.hard.
var counted = map[string]corev1.ResourceName{
	"pods":                   corev1.ResourcePods,
	"services":               corev1.ResourceServices,
	"replicationcontrollers": corev1.ResourceReplicationControllers,
	"resourcequotas":         corev1.ResourceQuotas,
	"secrets":                corev1.ResourceSecrets,
	"persistentvolumeclaims": corev1.ResourcePersistentVolumeClaims,
}

// Resources are the resources a quota counts, in a fixed order.
var Resources = []string{"pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "persistentvolumeclaims"}

// Counts tells whether creating an object of resource is charged to a quota.
func Counts(resource string) bool {
	_, ok := counted[resource]
	return ok
}

// Usage is what one object of resource uses: one of its count and, for a pod that is
// not terminal, the sums of its containers' cpu and memory limits (as Kubernetes 1.0
// counted compute: from limits).
func Usage(res string, obj runtime.Object) corev1.ResourceList {
	name, ok := counted[res]
	if !ok {
		return nil
	}
	p, isPod := obj.(*corev1.Pod)
	if isPod && pod.Terminal(p) {
		return corev1.ResourceList{}
	}
	u := corev1.ResourceList{name: *resource.NewQuantity(1, resource.DecimalSI)}
	if isPod {
		cpu, mem := podLimit(p, corev1.ResourceCPU), podLimit(p, corev1.ResourceMemory)
		u[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpu.MilliValue(), resource.DecimalSI)
		u[corev1.ResourceMemory] = *resource.NewQuantity(mem.Value(), resource.DecimalSI)
	}
	return u
}

// podLimit sums the containers' limits of r.
func podLimit(p *corev1.Pod, r corev1.ResourceName) resource.Quantity {
	var sum resource.Quantity
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[r]; ok {
			sum.Add(q)
		}
	}
	return sum
}

// unbounded tells whether some container of p sets no (or a zero) limit of r.
func unbounded(p *corev1.Pod, r corev1.ResourceName) bool {
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[r]; !ok || q.IsZero() {
			return true
		}
	}
	return len(p.Spec.Containers) == 0
}

// Charge is a create admitted against a quota whose object a recount has not seen
// yet: its usage stays counted until the object is seen in the store or the charge
// is older than the TTL (a create that failed after it was charged).
type Charge struct {
	Resource string
	Name     string
	UID      types.UID
	Usage    corev1.ResourceList
	At       time.Time
}

// ChargeTTL is how long a charge whose object a recount has not seen is still
// counted: a create is persisted right after admission, so an unseen charge older
// than that is a create that failed.
const ChargeTTL = 30 * time.Second

// Lister calls fn with each stored object of resource in the quota's namespace.
type Lister func(resource string, fn func(obj runtime.Object) bool)

// Recount computes status.used for hard from the stored objects, plus the charges
// not seen yet; it returns the charges still pending. Only the resources hard names
// are counted, and only the kinds they need are listed.
func Recount(hard corev1.ResourceList, list Lister, pending []Charge, now time.Time) (corev1.ResourceList, []Charge) {
	used := corev1.ResourceList{}
	for name := range hard {
		used[name] = zero(name)
	}
	compute := has(hard, corev1.ResourceCPU) || has(hard, corev1.ResourceMemory)
	seen := map[types.UID]bool{}
	for _, res := range Resources {
		if !has(hard, counted[res]) && (res != "pods" || !compute) {
			continue
		}
		waiting := map[types.UID]bool{}
		for _, c := range pending {
			if c.Resource == res {
				waiting[c.UID] = true
			}
		}
		list(res, func(obj runtime.Object) bool {
			if len(waiting) > 0 {
				if m, err := meta.Accessor(obj); err == nil && waiting[m.GetUID()] {
					seen[m.GetUID()] = true
				}
			}
			add(used, hard, Usage(res, obj))
			return true
		})
	}
	var keep []Charge
	for _, c := range pending {
		if seen[c.UID] || now.Sub(c.At) >= ChargeTTL {
			continue
		}
		add(used, hard, c.Usage)
		keep = append(keep, c)
	}
	return used, keep
}

func has(l corev1.ResourceList, name corev1.ResourceName) bool {
	_, ok := l[name]
	return ok
}

// zero is the zero quantity of name, in the format its sums take.
func zero(name corev1.ResourceName) resource.Quantity {
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(0, resource.DecimalSI)
	}
	return *resource.NewQuantity(0, resource.DecimalSI)
}

// add adds u to used, for the names hard has.
func add(used, hard, u corev1.ResourceList) {
	for name, q := range u {
		if !has(hard, name) {
			continue
		}
		sum := used[name]
		if name == corev1.ResourceCPU {
			used[name] = *resource.NewMilliQuantity(sum.MilliValue()+q.MilliValue(), resource.DecimalSI)
		} else {
			used[name] = *resource.NewQuantity(sum.Value()+q.Value(), resource.DecimalSI)
		}
	}
}

// ErrUnknownUsage refuses a charge before the quota's usage was first counted.
var ErrUnknownUsage = errors.New("resourcequota: quota usage stats are not yet known, unable to admit resource until an accurate count is completed")

// Admit decides whether creating obj (of resource) fits under hard given used, and
// returns the usage after the create. A refusal is a 403 Forbidden with Kubernetes
// 1.0's messages: "Limited to 10 pods", "Limited to 256Gi memory, but pod has no
// specified memory limit", "Limited to 2 CPU"; memory is checked before cpu, as 1.0
// did.
func Admit(hard, used corev1.ResourceList, res string, obj runtime.Object) (corev1.ResourceList, error) {
	u := Usage(res, obj)
	if len(u) == 0 {
		return used, nil
	}
	next := used.DeepCopy()
	if next == nil {
		next = corev1.ResourceList{}
	}
	name := counted[res]
	if h, ok := hard[name]; ok {
		cur, known := used[name]
		if !known {
			return nil, ErrUnknownUsage
		}
		if cur.Value() >= h.Value() {
			return nil, refuse(res, obj, fmt.Sprintf("Limited to %s %s", h.String(), name))
		}
	}
	if p, ok := obj.(*corev1.Pod); ok {
		for _, r := range []struct {
			name   corev1.ResourceName
			unit   string // as 1.0 wrote it in its messages
			sub    string
			milli  bool
			amount resource.Quantity
		}{
			{corev1.ResourceMemory, "memory", "memory", false, u[corev1.ResourceMemory]},
			{corev1.ResourceCPU, "CPU", "cpu", true, u[corev1.ResourceCPU]},
		} {
			h, ok := hard[r.name]
			if !ok {
				continue
			}
			if unbounded(p, r.name) {
				return nil, refuse(res, obj, fmt.Sprintf("Limited to %s %s, but pod has no specified %s limit", h.String(), r.unit, r.sub))
			}
			cur, known := used[r.name]
			if !known {
				return nil, ErrUnknownUsage
			}
			over := cur.Value()+r.amount.Value() > h.Value()
			if r.milli {
				over = cur.MilliValue()+r.amount.MilliValue() > h.MilliValue()
			}
			if over {
				return nil, refuse(res, obj, fmt.Sprintf("Limited to %s %s", h.String(), r.unit))
			}
		}
	}
	add(next, hard, u)
	return next, nil
}

// refuse is the 403 of a create over quota: `Pod "web" is forbidden: Limited to 10
// pods`, naming the kind as Kubernetes 1.0 did.
func refuse(res string, obj runtime.Object, msg string) error {
	kind := res
	if r, ok := kinds.Lookup(res); ok {
		kind = r.Kind
	}
	name := ""
	if m, err := meta.Accessor(obj); err == nil {
		name = m.GetName()
	}
	return apierrors.NewForbidden(schema.GroupResource{Resource: kind}, name, errors.New(msg))
}

// Status is the status a quota should have: hard as its spec says, used as counted.
func Status(q *corev1.ResourceQuota, used corev1.ResourceList) corev1.ResourceQuotaStatus {
	return corev1.ResourceQuotaStatus{Hard: q.Spec.Hard.DeepCopy(), Used: used.DeepCopy()}
}

// StatusDiffers tells whether q's stored status differs from st (quantities compared
// by value).
func StatusDiffers(q *corev1.ResourceQuota, st corev1.ResourceQuotaStatus) bool {
	return !apiequality.Semantic.DeepEqual(q.Status.Hard, st.Hard) || !apiequality.Semantic.DeepEqual(q.Status.Used, st.Used)
}
