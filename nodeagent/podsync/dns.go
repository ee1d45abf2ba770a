package podsync

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// DNSConfig is a container's resolver configuration (its resolv.conf): nameservers,
// search list and options. Empty, the engine gives the host's.
type DNSConfig struct{ Servers, Searches, Options []string }

// PodDNS is the resolver configuration of pod's containers on a node whose cluster
// DNS server is clusterDNS ("" for none) serving domain. ClusterFirst (the default
// policy) gives the cluster server, the search list "<ns>.svc.<domain>
// svc.<domain> <domain>" and ndots:5, except on the host's network, where only
// ClusterFirstWithHostNet does. None gives the pod's own dnsConfig nameservers and
// searches. Anything else (Default) gives the host's.
func PodDNS(pod *corev1.Pod, clusterDNS, domain string) DNSConfig {
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	clusterFirst := policy == corev1.DNSClusterFirst && !pod.Spec.HostNetwork ||
		policy == corev1.DNSClusterFirstWithHostNet && pod.Spec.HostNetwork
	switch {
	case clusterFirst && clusterDNS != "":
		return DNSConfig{
			Servers:  []string{clusterDNS},
			Searches: []string{pod.Namespace + ".svc." + domain, "svc." + domain, domain},
			Options:  []string{"ndots:5"},
		}
	case policy == corev1.DNSNone && pod.Spec.DNSConfig != nil:
		return DNSConfig{Servers: pod.Spec.DNSConfig.Nameservers, Searches: pod.Spec.DNSConfig.Searches}
	}
	return DNSConfig{}
}

// The service whose cluster IP is the cluster DNS server's when the agent is not
// given --cluster-dns.
const (
	KubeDNSNamespace = "kube-system"
	KubeDNSName      = "kube-dns"
)

// ClusterDNSServer is the nameserver of ClusterFirst pods: flag (--cluster-dns)
// when given; else the cluster IP of kubeDNS, the kube-system/kube-dns service,
// when it exists (nil when not) and has an IPv4 cluster IP; else "" (no cluster
// DNS: pods get the host's resolv.conf).
func ClusterDNSServer(flag string, kubeDNS *corev1.Service) string {
	if flag != "" {
		return flag
	}
	if kubeDNS == nil || kubeDNS.Namespace != KubeDNSNamespace || kubeDNS.Name != KubeDNSName || kubeDNS.DeletionTimestamp != nil {
		return ""
	}
	ip, err := netip.ParseAddr(kubeDNS.Spec.ClusterIP)
	if err != nil || !ip.Is4() || ip.IsUnspecified() {
		return "" // headless ("None"), unset or not an address
	}
	return ip.String()
}
