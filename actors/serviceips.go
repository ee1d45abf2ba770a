package actors

import (
	"errors"
	"net/netip"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeactor/kubeactor/actors/service"
	"github.com/kubeactor/kubeactor/persistence"
)

// The services manager owns the cluster IP and node port allocators: it is the one
// place every service write passes through before it is persisted. It allocates what
// a create or update needs while routing it (in memory, without I/O), fills it into
// the request's object, and keeps what each service holds. Each service's actor
// reports its stored state after handling requests (stored, or childIdle once it
// holds nothing); what a request claimed and its service no longer holds, and no later
// request claims, is released then. So a refused create, a delete, or an update that
// drops a node port gives its IP or ports back. The --cluster-dns address is kept for
// kube-system/kube-dns: never handed out to another service, nor released.

// InvalidError is a write refused for the value of a field (a cluster IP or node port
// that is taken or outside its range). The gateway answers 422 Invalid with the causes.
type InvalidError struct {
	Kind   string // e.g. "Service"
	Name   string
	Causes field.ErrorList
}

func (e *InvalidError) Error() string {
	return e.Kind + " " + e.Name + " is invalid: " + e.Causes.ToAggregate().Error()
}

// claims are the cluster IP and node ports a service holds, or a request claims.
type claims struct {
	ip    netip.Addr
	ports []int32
}

func (c claims) has(ip netip.Addr, port int32) bool {
	if ip.IsValid() {
		return c.ip == ip
	}
	return slices.Contains(c.ports, port)
}

// claimsOf reads what a stored service holds.
func claimsOf(svc *corev1.Service) claims {
	var c claims
	if svc == nil {
		return c
	}
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
		c.ip = ip
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 && !slices.Contains(c.ports, p.NodePort) {
			c.ports = append(c.ports, p.NodePort)
		}
	}
	return c
}

// pendingClaim is what a routed request claimed, until its actor reports having
// handled it (seq is its number among the requests routed to that actor).
type pendingClaim struct {
	seq uint64
	claims
}

type serviceAllocations struct {
	env     *env
	ips     *service.IPs
	ports   *service.Ports
	held    map[objKey]claims
	pending map[objKey][]pendingClaim
	// foreignIPs and foreignPorts: values the store gives to services of other
	// members (claims.go).
	foreignIPs   foreign[netip.Addr]
	foreignPorts foreign[int32]
	// dnsTaken: a stored service other than kube-dns holds the cluster DNS address
	// (it was chosen before --cluster-dns named it); kube-dns cannot have it then.
	dnsTaken bool
}

var _ managerExt = (*serviceAllocations)(nil)

func newServiceAllocations(e *env) *serviceAllocations {
	return &serviceAllocations{env: e, held: map[objKey]claims{}, pending: map[objKey][]pendingClaim{},
		foreignIPs: foreign[netip.Addr]{}, foreignPorts: foreign[int32]{}}
}

// load rebuilds the allocators from the stored services.
func (s *serviceAllocations) load(m *manager) {
	var svcs []*corev1.Service
	m.env.store.Snapshot("services").Ascend("", "", func(it *persistence.Item) bool {
		// Another member's services are its allocator's: this one learns of what
		// they hold from the store when it allocates (heldByAnother).
		if svc, ok := it.Object().(*corev1.Service); ok && m.env.local(it.Key) {
			svcs = append(svcs, svc)
			s.held[objKey{svc.Namespace, svc.Name}] = claimsOf(svc)
		}
		return true
	})
	var ipErrs, portErrs []error
	s.ips, ipErrs = service.RebuildIPs(s.env.services.ClusterIPRange, svcs)
	s.ports, portErrs = service.RebuildPorts(s.env.services.NodePortRange, svcs)
	for _, err := range append(ipErrs, portErrs...) {
		s.env.log.WithField("error", err).Warn("stored service allocation not held")
	}
	if s.ips == nil || s.ports == nil { // Start validated the ranges
		panic(errors.Join(append(ipErrs, portErrs...)...))
	}
	// The --cluster-dns address is kept for kube-dns even while it does not exist.
	if dns := s.env.services.ClusterDNS; dns.IsValid() && !s.ips.Has(dns) {
		_ = s.ips.Allocate(dns) // in the range: Start checked
	}
	for k, c := range s.held {
		if c.ip == s.env.services.ClusterDNS && c.ip.IsValid() && k != kubeDNSKey {
			s.dnsTaken = true
			s.env.log.WithFields(logrus.Fields{"namespace": k.namespace, "name": k.name, "ip": c.ip.String()}).
				Warn("the cluster DNS address is held by another service")
		}
	}
}

// kubeDNSKey names the one service that may have the cluster DNS address.
var kubeDNSKey = objKey{service.KubeDNSNamespace, service.KubeDNSName}

// reservedFor reports whether ip is the cluster DNS address and k the kube-dns
// service, the only one that may have it.
func (s *serviceAllocations) reservedFor(k objKey, ip netip.Addr) bool {
	return ip == s.env.services.ClusterDNS && k == kubeDNSKey && !s.dnsTaken
}

// admit fills in and claims the cluster IP and node ports of a service create or
// update, refusing a user's choice that is taken or outside its range.
func (s *serviceAllocations) admit(_ *manager, k objKey, msg routed, seq uint64) error {
	var slot *runtime.Object
	var al *allocation
	switch r := msg.(type) {
	case *createRequest:
		slot, al = &r.object, &r.allocation
	case *updateRequest:
		slot, al = &r.object, &r.allocation
	default:
		return nil
	}
	in, ok := (*slot).(*corev1.Service)
	if !ok {
		return nil
	}
	svc := in.DeepCopy()
	c, err := s.allocate(k, svc)
	if err != nil {
		return err
	}
	*slot = svc
	al.filled(in)
	s.pending[k] = append(s.pending[k], pendingClaim{seq: seq, claims: c})
	return nil
}

// ours reports whether the service k holds or has claimed ip (or port, when ip is
// not valid) already.
func (s *serviceAllocations) ours(k objKey, ip netip.Addr, port int32) bool {
	if s.held[k].has(ip, port) {
		return true
	}
	for _, p := range s.pending[k] {
		if p.has(ip, port) {
			return true
		}
	}
	return false
}

// allocate fills svc's cluster IP and node ports and returns what it claims; on a
// refusal nothing stays allocated.
func (s *serviceAllocations) allocate(k objKey, svc *corev1.Service) (claims, error) {
	var c claims
	var fresh claims // allocated here: released again on a refusal
	undo := func() {
		if fresh.ip.IsValid() {
			s.ips.Release(fresh.ip)
		}
		for _, p := range fresh.ports {
			s.ports.Release(p)
		}
	}
	refuse := func(err error, path *field.Path) (claims, error) {
		undo()
		var ae *service.AllocationError
		if errors.As(err, &ae) {
			return claims{}, &InvalidError{Kind: "Service", Name: svc.Name, Causes: field.ErrorList{ae.Field(path)}}
		}
		return claims{}, err
	}

	key := persistence.Key{Resource: "services", Namespace: k.namespace, Name: k.name}
	held := func(claim string) bool { return s.env.heldByAnother(key, claim) }
	switch ip := svc.Spec.ClusterIP; {
	case svc.Spec.Type == corev1.ServiceTypeExternalName || ip == corev1.ClusterIPNone:
	case ip == "":
		a, err := allocateFree(func() (netip.Addr, error) { return s.ips.AllocateNext(rand.Intn) }, s.ips.Release,
			service.ClusterIPClaim, held, s.foreignIPs)
		if err != nil {
			return refuse(err, service.ClusterIPPath)
		}
		fresh.ip, c.ip = a, a
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = a.String(), []string{a.String()}
	default:
		a, err := netip.ParseAddr(ip)
		if err != nil {
			undo()
			return claims{}, &InvalidError{Kind: "Service", Name: svc.Name,
				Causes: field.ErrorList{field.Invalid(service.ClusterIPPath, ip, "must be a valid IP address")}}
		}
		if !s.ours(k, a, 0) && !s.reservedFor(k, a) {
			if err := s.ips.Allocate(a); err != nil && !s.foreignIPs.adopt(a, held) {
				return refuse(err, service.ClusterIPPath)
			}
			fresh.ip = a
		}
		// Ours here, but maybe another member's service took it meanwhile.
		if held(service.ClusterIPClaim(a)) {
			return refuse(&service.AllocationError{Value: a.String(), Err: service.ErrAllocated}, service.ClusterIPPath)
		}
		c.ip = a
	}

	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return c, nil
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		switch {
		case p.NodePort == 0:
			port, err := allocateFree(func() (int32, error) { return s.ports.AllocateNext(rand.Intn) }, s.ports.Release,
				service.NodePortClaim, held, s.foreignPorts)
			if err != nil {
				return refuse(err, service.NodePortPath(i))
			}
			p.NodePort = port
			fresh.ports = append(fresh.ports, port)
		case slices.Contains(c.ports, p.NodePort):
		case s.ours(k, netip.Addr{}, p.NodePort):
			if held(service.NodePortClaim(p.NodePort)) { // another member's service took it meanwhile
				return refuse(&service.AllocationError{Value: p.NodePort, Err: service.ErrAllocated}, service.NodePortPath(i))
			}
		default:
			if err := s.ports.Allocate(p.NodePort); err != nil && !s.foreignPorts.adopt(p.NodePort, held) {
				return refuse(err, service.NodePortPath(i))
			}
			fresh.ports = append(fresh.ports, p.NodePort)
			if held(service.NodePortClaim(p.NodePort)) {
				return refuse(&service.AllocationError{Value: p.NodePort, Err: service.ErrAllocated}, service.NodePortPath(i))
			}
		}
		if !slices.Contains(c.ports, p.NodePort) {
			c.ports = append(c.ports, p.NodePort)
		}
	}
	return c, nil
}

func (s *serviceAllocations) receive(m *manager, _ actor.Context, msg any) {
	switch r := msg.(type) {
	case *stored:
		if c, ok := m.children[r.key]; ok && c.pid.Equal(r.pid) {
			svc, _ := r.obj.(*corev1.Service)
			s.settle(r.key, r.handled, claimsOf(svc))
		}
	case *childIdle:
		if c, ok := m.children[r.key]; ok && c.pid.Equal(r.pid) {
			s.settle(r.key, r.handled, claims{})
		}
	}
}

// settle records what service k holds after its actor handled `handled` requests,
// and releases what it held or claimed and no longer does.
func (s *serviceAllocations) settle(k objKey, handled uint64, now claims) {
	before := []claims{s.held[k]}
	rest := s.pending[k][:0]
	for _, p := range s.pending[k] {
		if p.seq <= handled {
			before = append(before, p.claims)
		} else {
			rest = append(rest, p)
		}
	}
	if len(rest) == 0 {
		delete(s.pending, k)
	} else {
		s.pending[k] = rest
	}
	if now.ip.IsValid() || len(now.ports) > 0 {
		s.held[k] = now
	} else {
		delete(s.held, k)
	}
	for _, b := range before {
		if b.ip.IsValid() && !s.ours(k, b.ip, 0) && b.ip != s.env.services.ClusterDNS {
			s.ips.Release(b.ip)
		}
		for _, p := range b.ports {
			if !s.ours(k, netip.Addr{}, p) {
				s.ports.Release(p)
			}
		}
	}
}

// forget settles a key whose actor is gone with what the store holds for it: the
// pending requests died with the actor. A service now hosted by another member is
// that member's to allocate for: this one lets go of all it knew of it.
func (s *serviceAllocations) forget(m *manager, k objKey) {
	if !m.env.local(persistence.Key{Resource: "services", Namespace: k.namespace, Name: k.name}) {
		s.settle(k, ^uint64(0), claims{})
		return
	}
	if len(s.pending[k]) == 0 {
		return
	}
	var svc *corev1.Service
	it, err := m.env.store.Get(persistence.Key{Resource: "services", Namespace: k.namespace, Name: k.name})
	switch {
	case err == nil:
		svc, _ = it.Object().(*corev1.Service)
	case !errors.Is(err, persistence.ErrNotFound):
		m.env.log.WithFields(logrus.Fields{"namespace": k.namespace, "name": k.name, "error": err}).
			Error("read service to release its claims")
		return // keep the claims: leaking beats handing out an IP twice
	}
	s.settle(k, ^uint64(0), claimsOf(svc))
}
