package dns

import (
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Table is the state DNS answers come from: the cluster's services and endpoints. It
// holds the store's objects, shared and never mutated. Safe for concurrent use: one
// follower writes, queries read.
type Table struct {
	mu         sync.RWMutex
	services   map[types.NamespacedName]*corev1.Service
	endpoints  map[types.NamespacedName]*corev1.Endpoints
	byIP       map[netip.Addr]types.NamespacedName // cluster IP -> service
	namespaces map[string]int                      // services per namespace
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{
		services:   map[types.NamespacedName]*corev1.Service{},
		endpoints:  map[types.NamespacedName]*corev1.Endpoints{},
		byIP:       map[netip.Addr]types.NamespacedName{},
		namespaces: map[string]int{},
	}
}

func keyOf(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// SetService adds or replaces a service.
func (t *Table) SetService(svc *corev1.Service) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.setServiceLocked(svc)
}

func (t *Table) setServiceLocked(svc *corev1.Service) {
	k := keyOf(svc.Namespace, svc.Name)
	t.deleteServiceLocked(k)
	t.services[k] = svc
	t.namespaces[k.Namespace]++
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
		t.byIP[ip] = k
	}
}

// DeleteService removes a service.
func (t *Table) DeleteService(ns, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deleteServiceLocked(keyOf(ns, name))
}

func (t *Table) deleteServiceLocked(k types.NamespacedName) {
	old, ok := t.services[k]
	if !ok {
		return
	}
	delete(t.services, k)
	if t.namespaces[k.Namespace]--; t.namespaces[k.Namespace] <= 0 {
		delete(t.namespaces, k.Namespace)
	}
	if ip, err := netip.ParseAddr(old.Spec.ClusterIP); err == nil && t.byIP[ip] == k {
		delete(t.byIP, ip)
	}
}

// SetEndpoints adds or replaces the endpoints of a service.
func (t *Table) SetEndpoints(eps *corev1.Endpoints) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endpoints[keyOf(eps.Namespace, eps.Name)] = eps
}

// DeleteEndpoints removes the endpoints of a service.
func (t *Table) DeleteEndpoints(ns, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.endpoints, keyOf(ns, name))
}

// ResetServices replaces every service (after a (re)load from a snapshot).
func (t *Table) ResetServices(svcs []*corev1.Service) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services = map[types.NamespacedName]*corev1.Service{}
	t.byIP = map[netip.Addr]types.NamespacedName{}
	t.namespaces = map[string]int{}
	for _, s := range svcs {
		t.setServiceLocked(s)
	}
}

// ResetEndpoints replaces every endpoints object.
func (t *Table) ResetEndpoints(eps []*corev1.Endpoints) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endpoints = make(map[types.NamespacedName]*corev1.Endpoints, len(eps))
	for _, e := range eps {
		t.endpoints[keyOf(e.Namespace, e.Name)] = e
	}
}

// view is what one answer reads, under the table's read lock.
func (t *Table) service(ns, name string) (*corev1.Service, *corev1.Endpoints) {
	k := keyOf(ns, name)
	return t.services[k], t.endpoints[k]
}
