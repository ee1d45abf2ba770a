package service

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// lbNode is a node whose service proxy runs (the agent's, in iptables mode).
func lbNode(name string, ready corev1.ConditionStatus, addrs ...corev1.NodeAddress) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{kinds.ServiceProxyAnnotation: "iptables"}},
		Status: corev1.NodeStatus{Addresses: addrs}}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	}
	return n
}

// noProxy takes the service proxy's mark off n: a kubelet without kube-proxy.
func noProxy(n *corev1.Node) *corev1.Node {
	n.Annotations = nil
	return n
}

func internal(ip string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}
}

func TestIngress(t *testing.T) {
	lb := service(port("http", 80, intstr.FromInt32(8080)))
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	nodePort := lb.DeepCopy()
	nodePort.Spec.Type = corev1.ServiceTypeNodePort
	deleting := lb.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name  string
		svc   *corev1.Service
		nodes []*corev1.Node
		want  []string
	}{
		{"no nodes", lb, nil, nil},
		{"Ready nodes, sorted by address", lb, []*corev1.Node{
			lbNode("a", corev1.ConditionTrue, internal("10.0.0.9")),
			lbNode("b", corev1.ConditionTrue, internal("10.0.0.10")),
			lbNode("c", corev1.ConditionTrue, internal("9.0.0.1")),
		}, []string{"9.0.0.1", "10.0.0.9", "10.0.0.10"}},
		{"not Ready, Unknown and never posted nodes are left out", lb, []*corev1.Node{
			lbNode("a", corev1.ConditionTrue, internal("10.0.0.1")),
			lbNode("b", corev1.ConditionFalse, internal("10.0.0.2")),
			lbNode("c", corev1.ConditionUnknown, internal("10.0.0.3")),
			lbNode("d", "", internal("10.0.0.4")),
		}, []string{"10.0.0.1"}},
		{"nodes that run no service proxy are left out", lb, []*corev1.Node{
			lbNode("a", corev1.ConditionTrue, internal("10.0.0.1")),
			noProxy(lbNode("b", corev1.ConditionTrue, internal("10.0.0.2"))),
			lbNode("c", corev1.ConditionTrue, internal("10.0.0.3")),
		}, []string{"10.0.0.1", "10.0.0.3"}},
		{"duplicates once", lb, []*corev1.Node{
			lbNode("a", corev1.ConditionTrue, internal("10.0.0.1")),
			lbNode("b", corev1.ConditionTrue, internal("10.0.0.1")),
		}, []string{"10.0.0.1"}},
		{"InternalIP over the others; LegacyHostIP for a v1.0 node; no address: left out", lb, []*corev1.Node{
			lbNode("a", corev1.ConditionTrue, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "1.2.3.4"}, internal("10.0.0.1"),
				corev1.NodeAddress{Type: corev1.NodeHostName, Address: "a"}),
			lbNode("b", corev1.ConditionTrue, corev1.NodeAddress{Type: "LegacyHostIP", Address: "10.0.0.2"}),
			lbNode("c", corev1.ConditionTrue, corev1.NodeAddress{Type: corev1.NodeHostName, Address: "c"}),
			lbNode("d", corev1.ConditionTrue, internal("not-an-ip")),
		}, []string{"10.0.0.1", "10.0.0.2"}},
		{"a NodePort service has none", nodePort, []*corev1.Node{lbNode("a", corev1.ConditionTrue, internal("10.0.0.1"))}, nil},
		{"a service being deleted has none", deleting, []*corev1.Node{lbNode("a", corev1.ConditionTrue, internal("10.0.0.1"))}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Ingress(tc.svc, tc.nodes)
			var ips []string
			for _, in := range got {
				if in.Hostname != "" || in.IPMode != nil || len(in.Ports) > 0 {
					t.Errorf("entry %+v: want an ip entry only", in)
				}
				ips = append(ips, in.IP)
			}
			if !slices.Equal(ips, tc.want) {
				t.Errorf("Ingress = %v, want %v", ips, tc.want)
			}
		})
	}
}

func TestIngressChanged(t *testing.T) {
	ing := func(ips ...string) []corev1.LoadBalancerIngress {
		var out []corev1.LoadBalancerIngress
		for _, ip := range ips {
			out = append(out, corev1.LoadBalancerIngress{IP: ip})
		}
		return out
	}
	tests := []struct {
		name      string
		cur, want []corev1.LoadBalancerIngress
		changed   bool
	}{
		{"both empty", nil, []corev1.LoadBalancerIngress{}, false},
		{"same", ing("10.0.0.1", "10.0.0.2"), ing("10.0.0.1", "10.0.0.2"), false},
		{"one more", ing("10.0.0.1"), ing("10.0.0.1", "10.0.0.2"), true},
		{"one less", ing("10.0.0.1", "10.0.0.2"), ing("10.0.0.1"), true},
		{"another order", ing("10.0.0.2", "10.0.0.1"), ing("10.0.0.1", "10.0.0.2"), true},
		{"a hostname set by someone else", []corev1.LoadBalancerIngress{{IP: "10.0.0.1", Hostname: "lb"}}, ing("10.0.0.1"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IngressChanged(tc.cur, tc.want); got != tc.changed {
				t.Errorf("IngressChanged = %v, want %v", got, tc.changed)
			}
		})
	}
}
