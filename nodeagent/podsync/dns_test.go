package podsync

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodDNS(t *testing.T) {
	pod := func(policy corev1.DNSPolicy, host bool) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web"}, Spec: corev1.PodSpec{DNSPolicy: policy, HostNetwork: host}}
	}
	none := pod(corev1.DNSNone, false)
	none.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.53"}, Searches: []string{"example.org"}}
	const clusterSearch = "web.svc.cluster.local svc.cluster.local cluster.local"
	tests := []struct {
		name       string
		pod        *corev1.Pod
		clusterDNS string
		servers    string
		search     string
		options    string
	}{
		{"cluster first", pod(corev1.DNSClusterFirst, false), "10.254.0.10", "10.254.0.10", clusterSearch, "ndots:5"},
		{"unset means cluster first", pod("", false), "10.254.0.10", "10.254.0.10", clusterSearch, "ndots:5"},
		{"default policy: the host's", pod(corev1.DNSDefault, false), "10.254.0.10", "", "", ""},
		{"host network, cluster first: the host's", pod(corev1.DNSClusterFirst, true), "10.254.0.10", "", "", ""},
		{"host network, cluster first with host net", pod(corev1.DNSClusterFirstWithHostNet, true), "10.254.0.10", "10.254.0.10", clusterSearch, "ndots:5"},
		{"without --cluster-dns", pod(corev1.DNSClusterFirst, false), "", "", "", ""},
		{"none: the pod's own", none, "10.254.0.10", "192.0.2.53", "example.org", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PodDNS(tt.pod, tt.clusterDNS, "cluster.local")
			if strings.Join(got.Servers, " ") != tt.servers || strings.Join(got.Searches, " ") != tt.search || strings.Join(got.Options, " ") != tt.options {
				t.Errorf("PodDNS = %+v, want servers %q search %q options %q", got, tt.servers, tt.search, tt.options)
			}
		})
	}
}

// TestClusterDNSServer: the flag wins; without it the kube-dns service's cluster IP,
// unless there is no such service or it has no usable address.
func TestClusterDNSServer(t *testing.T) {
	svc := func(ns, name, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip}}
	}
	deleting := svc("kube-system", "kube-dns", "10.254.0.10")
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name string
		flag string
		svc  *corev1.Service
		want string
	}{
		{"flag only", "10.0.0.10", nil, "10.0.0.10"},
		{"flag wins over the service", "10.0.0.10", svc("kube-system", "kube-dns", "10.254.0.10"), "10.0.0.10"},
		{"learned from the service", "", svc("kube-system", "kube-dns", "10.254.0.10"), "10.254.0.10"},
		{"no service: the host's", "", nil, ""},
		{"headless service", "", svc("kube-system", "kube-dns", "None"), ""},
		{"no cluster IP yet", "", svc("kube-system", "kube-dns", ""), ""},
		{"another service", "", svc("default", "kube-dns", "10.254.0.11"), ""},
		{"being deleted", "", deleting, ""},
		{"IPv6 is not for this node", "", svc("kube-system", "kube-dns", "fd00::a"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClusterDNSServer(tt.flag, tt.svc); got != tt.want {
				t.Errorf("ClusterDNSServer(%q, %v) = %q, want %q", tt.flag, tt.svc, got, tt.want)
			}
		})
	}
}
