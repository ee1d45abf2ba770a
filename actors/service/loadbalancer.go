package service

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// LoadBalancer services without a cloud: as k3s's service load balancer does, a
// service of type LoadBalancer is given as ingress the addresses of the nodes whose
// service proxy answers on them: the Ready nodes whose proxy (the agent's own, or
// kube-proxy beside a kubelet that runs none) marks them with
// kinds.ServiceProxyAnnotation while it runs. Each one's proxy DNATs traffic to <its
// address>:<service port> to the service's endpoints (nodeagent/proxy).

// Ingress is the status.loadBalancer.ingress svc should have, given the cluster's
// nodes: for a LoadBalancer service that is not being deleted, one ip entry per
// address (NodeAddress) of a node that Serves, sorted and without duplicates; for any
// other service, none. Pure.
func Ingress(svc *corev1.Service, nodes []*corev1.Node) []corev1.LoadBalancerIngress {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.DeletionTimestamp != nil {
		return nil
	}
	var ips []netip.Addr
	for _, n := range nodes {
		if !Serves(n) {
			continue
		}
		if ip, ok := NodeAddress(n); ok {
			ips = append(ips, ip)
		}
	}
	slices.SortFunc(ips, func(a, b netip.Addr) int { return a.Compare(b) })
	ips = slices.Compact(ips)
	if len(ips) == 0 {
		return nil
	}
	out := make([]corev1.LoadBalancerIngress, len(ips))
	for i, ip := range ips {
		out[i] = corev1.LoadBalancerIngress{IP: ip.String()}
	}
	return out
}

// IngressChanged reports whether the stored ingress cur differs from want.
func IngressChanged(cur, want []corev1.LoadBalancerIngress) bool {
	return !slices.EqualFunc(cur, want, func(a, b corev1.LoadBalancerIngress) bool {
		return equality.Semantic.DeepEqual(a, b)
	})
}

// Serves reports whether a LoadBalancer service's traffic may be sent to the node:
// it is Ready and its service proxy runs.
func Serves(n *corev1.Node) bool {
	return Ready(n) && n.Annotations[kinds.ServiceProxyAnnotation] != ""
}

// Ready reports whether the node's Ready condition is True.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// legacyHostIP is v1.0's address type for a node's IP (gone from the API types).
const legacyHostIP corev1.NodeAddressType = "LegacyHostIP"

// NodeAddress is the node's address its proxy answers on: its InternalIP, else (a
// v1.0 node) its LegacyHostIP.
func NodeAddress(n *corev1.Node) (netip.Addr, bool) {
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, legacyHostIP} {
		for _, a := range n.Status.Addresses {
			if a.Type != t {
				continue
			}
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				return ip.Unmap(), true
			}
		}
	}
	return netip.Addr{}, false
}

// IngressHas reports whether the ingress of svc names ip.
func IngressHas(svc *corev1.Service, ip netip.Addr) bool {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil && a.Unmap() == ip {
			return true
		}
	}
	return false
}
