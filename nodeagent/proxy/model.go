package proxy

import (
	"net"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// defaultAffinityTimeout is the ClientIP affinity timeout when the service gives none
// (Kubernetes' default of 10800 seconds; the book's userspace proxy used 180 minutes).
const defaultAffinityTimeout = 10800

// servicePort is one proxied port of a service with everything a rule needs.
type servicePort struct {
	name        ServicePortName
	protocol    corev1.Protocol
	clusterIP   string
	port        int32
	nodePort    int32
	externalIPs []string // spec.externalIPs and a LoadBalancer's ingress ips, sorted
	affinity    bool
	timeout     int32    // affinity timeout in seconds
	endpoints   []string // "ip:port", sorted
}

// proxied reports whether the proxy handles the service at all: it needs a cluster IP
// (headless services and ExternalName have none to proxy).
func proxied(svc *corev1.Service) bool {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return false
	}
	ip := svc.Spec.ClusterIP
	return ip != "" && ip != corev1.ClusterIPNone && net.ParseIP(ip) != nil
}

// servicePorts flattens services and their endpoints into service ports, sorted by
// namespace, name and then spec order of the ports. Pure.
func servicePorts(services []corev1.Service, endpoints []corev1.Endpoints) []servicePort {
	eps := make(map[types.NamespacedName]*corev1.Endpoints, len(endpoints))
	for i := range endpoints {
		e := &endpoints[i]
		eps[types.NamespacedName{Namespace: e.Namespace, Name: e.Name}] = e
	}
	svcs := make([]*corev1.Service, 0, len(services))
	for i := range services {
		if proxied(&services[i]) {
			svcs = append(svcs, &services[i])
		}
	}
	sort.Slice(svcs, func(i, j int) bool {
		if svcs[i].Namespace != svcs[j].Namespace {
			return svcs[i].Namespace < svcs[j].Namespace
		}
		return svcs[i].Name < svcs[j].Name
	})
	var out []servicePort
	for _, svc := range svcs {
		nn := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
		for _, p := range svc.Spec.Ports {
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			sp := servicePort{
				name:        ServicePortName{NamespacedName: nn, Port: p.Name},
				protocol:    proto,
				clusterIP:   svc.Spec.ClusterIP,
				port:        p.Port,
				externalIPs: append([]string(nil), svc.Spec.ExternalIPs...),
				affinity:    svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP,
				timeout:     defaultAffinityTimeout,
				endpoints:   endpointsFor(eps[nn], p.Name),
			}
			if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
				sp.nodePort = p.NodePort
			}
			if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
				// The ingress addresses (the nodes' own, given by the service's
				// controller) are served as external IPs are.
				for _, in := range svc.Status.LoadBalancer.Ingress {
					if net.ParseIP(in.IP) != nil {
						sp.externalIPs = append(sp.externalIPs, in.IP)
					}
				}
			}
			if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
				sp.timeout = *c.ClientIP.TimeoutSeconds
			}
			sort.Strings(sp.externalIPs)
			sp.externalIPs = slices.Compact(sp.externalIPs)
			out = append(out, sp)
		}
	}
	return out
}

// endpointsFor lists the ready "ip:port" backends of the named port, sorted and unique.
// The protocol comes from the service, as in Kubernetes 1.0.
func endpointsFor(e *corev1.Endpoints, portName string) []string {
	if e == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, ss := range e.Subsets {
		for _, p := range ss.Ports {
			if p.Name != portName || p.Port <= 0 {
				continue
			}
			for _, a := range ss.Addresses {
				if a.IP == "" {
					continue
				}
				hp := net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port)))
				if !seen[hp] {
					seen[hp] = true
					out = append(out, hp)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
