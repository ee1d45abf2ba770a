package actors

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/persistentvolume"
	"github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/actors/service"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/persistence"
)

// The feeds' routes: which controllers must look again after a pod changed.

// podToRCs routes a pod's change to the RC that controls it or, for an orphan, to
// every RC of its namespace whose selector matches it (which may adopt it).
func podToRCs(e *env, ev persistence.Event) []persistence.Key {
	p, ok := ev.Item.Object().(*corev1.Pod)
	if !ok {
		return nil
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		if ref.Kind != "ReplicationController" {
			return nil
		}
		return []persistence.Key{{Resource: "replicationcontrollers", Namespace: p.Namespace, Name: ref.Name}}
	}
	if ev.Type == persistence.Deleted {
		return nil
	}
	return keysWhere(e, "replicationcontrollers", p.Namespace, nil, func(rc *corev1.ReplicationController) bool {
		return len(rc.Spec.Selector) > 0 && labels.ValidatedSetSelector(rc.Spec.Selector).Matches(labels.Set(p.Labels))
	})
}

// keysWhere appends to keys the key of every stored object of resource in namespace
// ("": every namespace) that is a T for which keep holds: a route's scan of the
// current objects, under the store's read lock (keep must be quick).
func keysWhere[T runtime.Object](e *env, resource, namespace string, keys []persistence.Key, keep func(T) bool) []persistence.Key {
	e.store.AscendCurrent(resource, namespace, func(it *persistence.Item) bool {
		if o, ok := it.Object().(T); ok && keep(o) {
			keys = append(keys, it.Key)
		}
		return true
	})
	return keys
}

// podToServices routes a pod's change to the services of its namespace whose selector
// matches the pod, and to those whose endpoints list it (it may have stopped matching).
func podToServices(e *env, ev persistence.Event) []persistence.Key {
	p, ok := ev.Item.Object().(*corev1.Pod)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var keys []persistence.Key
	e.store.AscendCurrent("services", p.Namespace, func(it *persistence.Item) bool {
		svc, ok := it.Object().(*corev1.Service)
		if ok && service.Selects(svc, p) {
			keys = append(keys, it.Key)
			seen[svc.Name] = true
		}
		return true
	})
	e.store.AscendCurrent("endpoints", p.Namespace, func(it *persistence.Item) bool {
		ep, ok := it.Object().(*corev1.Endpoints)
		if ok && !seen[ep.Name] && service.Lists(ep, p) {
			keys = append(keys, persistence.Key{Resource: "services", Namespace: p.Namespace, Name: ep.Name})
		}
		return true
	})
	return keys
}

// nodeToLoadBalancers routes a node's change to the LoadBalancer services whose
// ingress (service.Ingress) it may change: those that lack the address of a node
// that serves (Ready, its service proxy running), and those that list the address of
// a node that does not or is gone. A heartbeat that changes nothing routes nowhere.
func nodeToLoadBalancers(e *env, ev persistence.Event) []persistence.Key {
	n, ok := ev.Item.Object().(*corev1.Node)
	if !ok {
		return nil
	}
	ip, hasIP := service.NodeAddress(n)
	serves := hasIP && ev.Type != persistence.Deleted && service.Serves(n)
	return keysWhere(e, "services", "", nil, func(svc *corev1.Service) bool {
		// A Ready node whose address changed is missing under its new one, so the
		// old one goes too; a node without an address routes everywhere.
		return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && (!hasIP || serves != service.IngressHas(svc, ip))
	})
}

func podKey(ns, name string) persistence.Key {
	return persistence.Key{Resource: "pods", Namespace: ns, Name: name}
}

// toQuotas routes a change of an object that quotas count (resourcequota.Resources)
// to the quotas of its namespace, which recount: a namespace without quotas costs
// one empty scan. An update matters only for a pod that became terminal (it stops
// counting); a quota's own change is its own actor's business.
func toQuotas(e *env, ev persistence.Event) []persistence.Key {
	if ev.Type == persistence.Modified {
		if p, ok := ev.Item.Object().(*corev1.Pod); !ok || !pod.Terminal(p) {
			return nil
		}
	}
	var keys []persistence.Key
	e.store.AscendCurrent("resourcequotas", ev.Item.Key.Namespace, func(it *persistence.Item) bool {
		if it.Key != ev.Item.Key {
			keys = append(keys, it.Key)
		}
		return true
	})
	return keys
}

// volumeToClaims routes a volume's change to the claim its claimRef names and, when
// the volume is free, to every claim that is not bound yet (it may now fit one).
func volumeToClaims(e *env, ev persistence.Event) []persistence.Key {
	pv, ok := ev.Item.Object().(*corev1.PersistentVolume)
	if !ok {
		return nil
	}
	var keys []persistence.Key
	if ref := pv.Spec.ClaimRef; ref != nil {
		keys = append(keys, persistence.Key{Resource: "persistentvolumeclaims", Namespace: ref.Namespace, Name: ref.Name})
		if ref.UID != "" || ev.Type == persistence.Deleted {
			return keys
		}
	}
	if ev.Type == persistence.Deleted {
		return nil
	}
	return keysWhere(e, "persistentvolumeclaims", "", keys, func(c *corev1.PersistentVolumeClaim) bool {
		return c.Status.Phase != corev1.ClaimBound
	})
}

// claimToVolumes routes a claim's change (its deletion above all) to the volumes
// whose claimRef names it: they become Bound, or Released.
func claimToVolumes(e *env, ev persistence.Event) []persistence.Key {
	c, ok := ev.Item.Object().(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	return keysWhere(e, "persistentvolumes", "", nil, func(pv *corev1.PersistentVolume) bool {
		return pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == c.Namespace && pv.Spec.ClaimRef.Name == c.Name
	})
}

// recyclerToVolume routes a change of a volume's recycler pod (its phase above all:
// the volume is reclaimed once the pod finished; its deletion: a new one may be
// made) to the volume its annotation names.
func recyclerToVolume(e *env, ev persistence.Event) []persistence.Key {
	p, ok := ev.Item.Object().(*corev1.Pod)
	if !ok || p.Namespace != e.pvRecycler.Namespace || p.Labels[persistentvolume.RecyclerRoleLabel] != persistentvolume.RecyclerRole {
		return nil
	}
	pv := p.Annotations[persistentvolume.RecyclerVolumeAnnotation]
	if pv == "" || p.Name != persistentvolume.RecyclerName(pv) {
		return nil
	}
	return []persistence.Key{{Resource: "persistentvolumes", Name: pv}}
}

// secretToServiceAccount routes a change of a service-account token secret to the
// account it names, which keeps its token secrets (a deleted one is replaced).
func secretToServiceAccount(_ *env, ev persistence.Event) []persistence.Key {
	s, ok := ev.Item.Object().(*corev1.Secret)
	if !ok || s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] == "" {
		return nil
	}
	return []persistence.Key{{Resource: "serviceaccounts", Namespace: s.Namespace, Name: s.Annotations[corev1.ServiceAccountNameKey]}}
}

// defaultAccountToNamespace routes the deletion of a namespace's default account to
// the namespace, which makes it again while it is active.
func defaultAccountToNamespace(_ *env, ev persistence.Event) []persistence.Key {
	if ev.Type != persistence.Deleted || ev.Item.Key.Name != serviceaccount.DefaultName {
		return nil
	}
	return []persistence.Key{{Resource: "namespaces", Name: ev.Item.Key.Namespace}}
}

// toItself routes a change of an object to its own actor: in a cluster an object's
// actor may have been activated from a replica's store that had not yet applied the
// last write of its previous owner (cluster.go); the resync makes it catch up.
func toItself(_ *env, ev persistence.Event) []persistence.Key {
	return []persistence.Key{ev.Item.Key}
}
