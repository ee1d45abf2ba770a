package service

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeactor/kubeactor/actors/pod"
)

// Endpoints computes the Endpoints object of svc from pods (those of other namespaces
// or not matching the selector are ignored): named after the service, with its labels.
// It returns nil for a service without a selector, whose endpoints the user manages.
func Endpoints(svc *corev1.Service, pods []*corev1.Pod) *corev1.Endpoints {
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	return &corev1.Endpoints{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      svc.Name,
			Namespace: svc.Namespace,
			Labels:    maps.Clone(svc.Labels),
		},
		Subsets: Subsets(svc, pods),
	}
}

// Subsets are the endpoint subsets of svc over pods: each selected pod with an IP that
// is not terminating nor finished is an address (under notReadyAddresses unless Ready,
// or the service publishes not-ready addresses) for every service port it can serve;
// a named targetPort is looked up in the pod's container ports, and a pod lacking it
// is left out of that port. The result is repacked (see RepackSubsets).
func Subsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	sel := labels.ValidatedSetSelector(svc.Spec.Selector) // validated by the API
	var subsets []corev1.EndpointSubset
	for _, p := range pods {
		if p.Namespace != svc.Namespace || !sel.Matches(labels.Set(p.Labels)) || !serving(p) {
			continue
		}
		addr := address(p)
		ready := svc.Spec.PublishNotReadyAddresses || pod.Ready(p)
		if len(svc.Spec.Ports) == 0 { // headless without ports: addresses only
			subsets = append(subsets, subset(addr, ready, nil))
			continue
		}
		for _, sp := range svc.Spec.Ports {
			port, ok := targetPort(p, sp)
			if !ok {
				continue
			}
			ep := corev1.EndpointPort{Name: sp.Name, Port: port, Protocol: cmp.Or(sp.Protocol, corev1.ProtocolTCP), AppProtocol: sp.AppProtocol}
			subsets = append(subsets, subset(addr, ready, &ep))
		}
	}
	return RepackSubsets(subsets)
}

func subset(addr corev1.EndpointAddress, ready bool, port *corev1.EndpointPort) corev1.EndpointSubset {
	var ss corev1.EndpointSubset
	if ready {
		ss.Addresses = []corev1.EndpointAddress{addr}
	} else {
		ss.NotReadyAddresses = []corev1.EndpointAddress{addr}
	}
	if port != nil {
		ss.Ports = []corev1.EndpointPort{*port}
	}
	return ss
}

// serving: the pod has an IP, is not terminating and has not finished.
func serving(p *corev1.Pod) bool {
	return p.Status.PodIP != "" && p.DeletionTimestamp == nil &&
		!pod.Terminal(p)
}

func address(p *corev1.Pod) corev1.EndpointAddress {
	a := corev1.EndpointAddress{
		IP: p.Status.PodIP,
		TargetRef: &corev1.ObjectReference{
			Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion,
		},
	}
	if p.Spec.NodeName != "" {
		n := p.Spec.NodeName
		a.NodeName = &n
	}
	return a
}

// targetPort resolves the service port's targetPort against pod: a number as it is
// (the port itself when unset), a name through the containers' ports of the same
// protocol.
func targetPort(p *corev1.Pod, sp corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	switch {
	case tp.Type == intstr.String && tp.StrVal != "":
		proto := cmp.Or(sp.Protocol, corev1.ProtocolTCP)
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == tp.StrVal && cmp.Or(cp.Protocol, corev1.ProtocolTCP) == proto {
					return cp.ContainerPort, true
				}
			}
		}
		return 0, false
	case tp.Type == intstr.Int && tp.IntVal != 0:
		return tp.IntVal, true
	default:
		return sp.Port, true
	}
}

// RepackSubsets regroups subsets as Kubernetes does: every address is listed once per
// subset, under the set of ports it serves, and addresses serving the same ports share
// a subset. An address that is ready for a port is not also listed as not ready for
// it. The result is sorted: addresses by IP then pod UID, ports by name, number and
// protocol, subsets by their first address.
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	type addrKey struct {
		ip  string
		uid string
	}
	key := func(a *corev1.EndpointAddress) addrKey {
		k := addrKey{ip: a.IP}
		if a.TargetRef != nil {
			k.uid = string(a.TargetRef.UID)
		}
		return k
	}
	noPort := corev1.EndpointPort{Port: -1} // addresses of subsets without ports
	addrs := map[addrKey]corev1.EndpointAddress{}
	ready := map[addrKey]map[corev1.EndpointPort]bool{} // address -> port -> ready
	add := func(a *corev1.EndpointAddress, port corev1.EndpointPort, r bool) {
		k := key(a)
		if _, ok := addrs[k]; !ok {
			addrs[k] = *a
			ready[k] = map[corev1.EndpointPort]bool{}
		}
		ready[k][port] = ready[k][port] || r
	}
	for i := range subsets {
		ports := subsets[i].Ports
		if len(ports) == 0 {
			ports = []corev1.EndpointPort{noPort}
		}
		for _, port := range ports {
			for j := range subsets[i].Addresses {
				add(&subsets[i].Addresses[j], port, true)
			}
			for j := range subsets[i].NotReadyAddresses {
				add(&subsets[i].NotReadyAddresses[j], port, false)
			}
		}
	}
	// Group addresses (ready and not separately) by the ports they serve.
	type group struct {
		ports    []corev1.EndpointPort
		ready    []corev1.EndpointAddress
		notReady []corev1.EndpointAddress
	}
	groups := map[string]*group{}
	for k, byPort := range ready {
		var ports []corev1.EndpointPort
		for p := range byPort {
			ports = append(ports, p)
		}
		slices.SortFunc(ports, comparePorts)
		// Ports an address is ready for and not ready for form two port sets; the
		// address's ready and not-ready entries go to the same subset only when both
		// hold for all its ports.
		var readyPorts, notReadyPorts []corev1.EndpointPort
		for _, p := range ports {
			if byPort[p] {
				readyPorts = append(readyPorts, p)
			} else {
				notReadyPorts = append(notReadyPorts, p)
			}
		}
		for _, set := range []struct {
			ports []corev1.EndpointPort
			ready bool
		}{{readyPorts, true}, {notReadyPorts, false}} {
			if len(set.ports) == 0 {
				continue
			}
			gk := portsKey(set.ports)
			g := groups[gk]
			if g == nil {
				g = &group{ports: slices.DeleteFunc(set.ports, func(p corev1.EndpointPort) bool { return p == noPort })}
				groups[gk] = g
			}
			if set.ready {
				g.ready = append(g.ready, addrs[k])
			} else {
				g.notReady = append(g.notReady, addrs[k])
			}
		}
	}
	out := make([]corev1.EndpointSubset, 0, len(groups))
	for _, g := range groups {
		slices.SortFunc(g.ready, compareAddresses)
		slices.SortFunc(g.notReady, compareAddresses)
		out = append(out, corev1.EndpointSubset{Addresses: g.ready, NotReadyAddresses: g.notReady, Ports: g.ports})
	}
	slices.SortFunc(out, func(a, b corev1.EndpointSubset) int {
		return cmp.Or(compareAddresses(firstAddress(a), firstAddress(b)), strings.Compare(portsKey(a.Ports), portsKey(b.Ports)))
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

func firstAddress(s corev1.EndpointSubset) corev1.EndpointAddress {
	switch {
	case len(s.Addresses) > 0:
		return s.Addresses[0]
	case len(s.NotReadyAddresses) > 0:
		return s.NotReadyAddresses[0]
	}
	return corev1.EndpointAddress{}
}

func compareAddresses(a, b corev1.EndpointAddress) int {
	if c := compareIPs(a.IP, b.IP); c != 0 {
		return c
	}
	var ua, ub string
	if a.TargetRef != nil {
		ua = string(a.TargetRef.UID)
	}
	if b.TargetRef != nil {
		ub = string(b.TargetRef.UID)
	}
	return strings.Compare(ua, ub)
}

// compareIPs orders parseable IPs numerically, before anything else.
func compareIPs(a, b string) int {
	pa, ea := netip.ParseAddr(a)
	pb, eb := netip.ParseAddr(b)
	switch {
	case ea == nil && eb == nil:
		return pa.Compare(pb)
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func comparePorts(a, b corev1.EndpointPort) int {
	return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
}

func portsKey(ports []corev1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		app := ""
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		fmt.Fprintf(&b, "%s/%d/%s/%s;", p.Name, p.Port, p.Protocol, app)
	}
	return b.String()
}

// Changed reports whether writing next over cur would change anything the controller
// manages (subsets and labels), so that no-op writes are skipped. A nil cur (no
// Endpoints yet) always changes.
func Changed(cur, next *corev1.Endpoints) bool {
	if cur == nil || next == nil {
		return cur != next
	}
	return !equality.Semantic.DeepEqual(cur.Subsets, next.Subsets) || !equality.Semantic.DeepEqual(cur.Labels, next.Labels)
}

// Kubernetes names of the service through which pods reach the API server.
const (
	KubernetesName      = "kubernetes"
	KubernetesNamespace = metav1.NamespaceDefault
)

// KubernetesService is the default/kubernetes service: the first address of the
// cluster IP range, port 443 ("https") forwarding to the API server's secure port.
func KubernetesService(clusterIP netip.Addr, serverPort int32) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: KubernetesName, Namespace: KubernetesNamespace,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"},
		},
		Spec: corev1.ServiceSpec{
			Type:            corev1.ServiceTypeClusterIP,
			ClusterIP:       clusterIP.String(),
			ClusterIPs:      []string{clusterIP.String()},
			SessionAffinity: corev1.ServiceAffinityNone,
			Ports: []corev1.ServicePort{{
				Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(serverPort),
			}},
		},
	}
}

// KubernetesEndpoints are the endpoints of the kubernetes service: the API server's
// advertised address and secure port.
func KubernetesEndpoints(server netip.Addr, port int32) *corev1.Endpoints {
	return &corev1.Endpoints{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{
			Name: KubernetesName, Namespace: KubernetesNamespace,
		},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: server.String()}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}},
		}},
	}
}
