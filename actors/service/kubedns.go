package service

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Names of the cluster DNS service, which the control plane serves itself.
const (
	KubeDNSName      = "kube-dns"
	KubeDNSNamespace = metav1.NamespaceSystem
)

// KubeDNSLabels are the labels of the kube-dns service, as the book's add-on has them
// (cluster-service: cluster-info lists it).
var KubeDNSLabels = map[string]string{"k8s-app": "kube-dns", "kubernetes.io/name": "KubeDNS", "kubernetes.io/cluster-service": "true"}

// KubeDNSService is kube-system/kube-dns: the fixed --cluster-dns address, port 53 over
// UDP ("dns") and TCP ("dns-tcp"), forwarding to the server's DNS port.
func KubeDNSService(clusterIP netip.Addr, dnsPort int32) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: KubeDNSName, Namespace: KubeDNSNamespace, Labels: KubeDNSLabels,
		},
		Spec: corev1.ServiceSpec{
			Type:            corev1.ServiceTypeClusterIP,
			ClusterIP:       clusterIP.String(),
			ClusterIPs:      []string{clusterIP.String()},
			SessionAffinity: corev1.ServiceAffinityNone,
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(dnsPort)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(dnsPort)},
			},
		},
	}
}

// KubeDNSEndpoints are the endpoints of kube-dns: the server's advertised address and
// DNS port, over UDP and TCP.
func KubeDNSEndpoints(server netip.Addr, dnsPort int32) *corev1.Endpoints {
	return &corev1.Endpoints{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{
			Name: KubeDNSName, Namespace: KubeDNSNamespace, Labels: KubeDNSLabels,
		},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: server.String()}},
			Ports: []corev1.EndpointPort{
				{Name: "dns", Port: dnsPort, Protocol: corev1.ProtocolUDP},
				{Name: "dns-tcp", Port: dnsPort, Protocol: corev1.ProtocolTCP},
			},
		}},
	}
}
