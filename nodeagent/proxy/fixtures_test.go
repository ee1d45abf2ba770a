package proxy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// svcBuilder builds test services.
type svcBuilder struct{ s corev1.Service }

func newSvc(ns, name, clusterIP string) *svcBuilder {
	return &svcBuilder{s: corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP, Type: corev1.ServiceTypeClusterIP},
	}}
}

func (b *svcBuilder) port(name string, port int32) *svcBuilder {
	b.s.Spec.Ports = append(b.s.Spec.Ports, corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP})
	return b
}

func (b *svcBuilder) udp(name string, port int32) *svcBuilder {
	b.s.Spec.Ports = append(b.s.Spec.Ports, corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolUDP})
	return b
}

func (b *svcBuilder) nodePort(port int32) *svcBuilder {
	b.s.Spec.Type = corev1.ServiceTypeNodePort
	b.s.Spec.Ports[len(b.s.Spec.Ports)-1].NodePort = port
	return b
}

// loadBalancer makes the service a LoadBalancer (node ports as they are) whose status
// lists ingress ips.
func (b *svcBuilder) loadBalancer(ips ...string) *svcBuilder {
	b.s.Spec.Type = corev1.ServiceTypeLoadBalancer
	for _, ip := range ips {
		b.s.Status.LoadBalancer.Ingress = append(b.s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return b
}

func (b *svcBuilder) affinity(timeout int32) *svcBuilder {
	b.s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	if timeout > 0 {
		b.s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
	}
	return b
}

func (b *svcBuilder) externalName(n string) *svcBuilder {
	b.s.Spec.Type = corev1.ServiceTypeExternalName
	b.s.Spec.ExternalName = n
	return b
}

func (b *svcBuilder) obj() corev1.Service { return b.s }

// newEps builds Endpoints with one subset: the addresses and the named ports.
func newEps(ns, name string, ips []string, ports map[string]int32) corev1.Endpoints {
	ss := corev1.EndpointSubset{}
	for _, ip := range ips {
		ss.Addresses = append(ss.Addresses, corev1.EndpointAddress{IP: ip})
	}
	for n, p := range ports {
		ss.Ports = append(ss.Ports, corev1.EndpointPort{Name: n, Port: p})
	}
	return corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Subsets: []corev1.EndpointSubset{ss}}
}
