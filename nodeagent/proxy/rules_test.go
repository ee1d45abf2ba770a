package proxy

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	goldenfile "github.com/kubeactor/kubeactor/internal/golden"
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

func TestIPTablesRules(t *testing.T) {
	node := NodeInfo{Name: "node-1", IP: "192.168.1.130", ClusterCIDR: "10.1.0.0/16"}
	tests := []struct {
		name      string
		services  []corev1.Service
		endpoints []corev1.Endpoints
		node      NodeInfo
	}{
		{
			name:      "clusterip",
			services:  []corev1.Service{newSvc("default", "redis-master", "10.254.208.57").port("", 6379).obj()},
			endpoints: []corev1.Endpoints{newEps("default", "redis-master", []string{"10.1.20.4", "10.1.30.8"}, map[string]int32{"": 6379})},
			node:      node,
		},
		{
			name:      "clusterip-no-cluster-cidr",
			services:  []corev1.Service{newSvc("default", "web", "10.254.0.10").port("http", 80).obj()},
			endpoints: []corev1.Endpoints{newEps("default", "web", []string{"10.1.0.2", "10.1.0.3", "10.1.0.4"}, map[string]int32{"http": 8080})},
			node:      NodeInfo{Name: "node-1"},
		},
		{
			name:      "nodeport",
			services:  []corev1.Service{newSvc("default", "frontend", "10.254.244.75").port("", 80).nodePort(30001).obj()},
			endpoints: []corev1.Endpoints{newEps("default", "frontend", []string{"10.1.20.5"}, map[string]int32{"": 80})},
			node:      node,
		},
		{
			// The ingress ips are DNATed as external IPs are (an ip that is also an
			// external IP once; a hostname entry is not an address); the node port too.
			name: "loadbalancer",
			services: []corev1.Service{func() corev1.Service {
				s := newSvc("default", "frontend", "10.254.244.75").port("", 80).nodePort(30001).loadBalancer("192.168.1.131", "192.168.1.130").obj()
				s.Spec.ExternalIPs = []string{"192.168.1.131"}
				s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: "lb.example.com"})
				return s
			}()},
			endpoints: []corev1.Endpoints{newEps("default", "frontend", []string{"10.1.20.5"}, map[string]int32{"": 80})},
			node:      node,
		},
		{
			name:     "multiple-named-ports",
			services: []corev1.Service{newSvc("prod", "dns", "10.254.0.53").udp("dns", 53).port("dns-tcp", 53).port("metrics", 9153).obj()},
			endpoints: []corev1.Endpoints{newEps("prod", "dns", []string{"10.1.1.2", "10.1.2.2"},
				map[string]int32{"dns": 53, "dns-tcp": 53, "metrics": 9153})},
			node: node,
		},
		{
			name:      "affinity-default-timeout",
			services:  []corev1.Service{newSvc("default", "sticky", "10.254.0.20").port("", 80).affinity(0).obj()},
			endpoints: []corev1.Endpoints{newEps("default", "sticky", []string{"10.1.0.2", "10.1.0.3"}, map[string]int32{"": 8080})},
			node:      node,
		},
		{
			name:      "affinity-timeout",
			services:  []corev1.Service{newSvc("default", "sticky", "10.254.0.20").port("", 80).affinity(600).obj()},
			endpoints: []corev1.Endpoints{newEps("default", "sticky", []string{"10.1.0.2"}, map[string]int32{"": 8080})},
			node:      node,
		},
		{
			name: "no-endpoints-reject",
			services: []corev1.Service{
				newSvc("default", "empty", "10.254.0.30").port("", 80).obj(),
				newSvc("default", "empty-np", "10.254.0.31").port("", 80).nodePort(30002).obj(),
			},
			endpoints: []corev1.Endpoints{newEps("default", "empty", nil, map[string]int32{"": 80})},
			node:      node,
		},
		{
			name: "headless-and-externalname-skipped",
			services: []corev1.Service{
				newSvc("default", "headless", corev1.ClusterIPNone).port("", 80).obj(),
				newSvc("default", "ext", "").externalName("db.example.com").obj(),
				newSvc("default", "kubernetes", "10.254.0.1").port("https", 443).obj(),
			},
			endpoints: []corev1.Endpoints{
				newEps("default", "headless", []string{"10.1.0.9"}, map[string]int32{"": 80}),
				newEps("default", "kubernetes", []string{"192.168.1.128"}, map[string]int32{"https": 6443}),
			},
			node: node,
		},
		{
			name:     "empty",
			services: nil,
			node:     node,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := IPTablesRules(tt.services, tt.endpoints, tt.node)
			golden(t, "iptables-"+tt.name, rs.Save())
			// Deterministic: the input order does not matter.
			rev := append([]corev1.Service(nil), tt.services...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if again := IPTablesRules(rev, tt.endpoints, tt.node).Save(); again != rs.Save() {
				t.Errorf("output depends on input order")
			}
			chains := map[string]bool{}
			for _, c := range rs.Chains {
				chains[c.Name] = true
			}
			seps := 0
			for _, sp := range servicePorts(tt.services, tt.endpoints) {
				if !strings.Contains(rs.Save(), `--comment "`+sp.name.String()+`"`) {
					t.Errorf("no rule carries the comment %q", sp.name.String())
				}
				// KUBE-SEP chains only for ClientIP affinity, one per endpoint.
				for _, ep := range sp.endpoints {
					if name := sepChain(sp.name, sp.protocol, ep); chains[name] != sp.affinity {
						t.Errorf("%s: chain %s present = %v, want %v (affinity)", sp.name, name, chains[name], sp.affinity)
					}
				}
				if sp.affinity {
					seps += len(sp.endpoints)
				}
			}
			if n := strings.Count(rs.Save(), ":KUBE-SEP-"); n != seps {
				t.Errorf("%d KUBE-SEP chains, want %d", n, seps)
			}
		})
	}
}

func TestUserspaceRules(t *testing.T) {
	node := NodeInfo{Name: "node-1", IP: "192.168.1.130"}
	pn := func(ns, name, port string) ServicePortName {
		return ServicePortName{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}, Port: port}
	}
	tests := []struct {
		name     string
		services []corev1.Service
		ports    map[ServicePortName]int
	}{
		{
			name:     "book-redis-master",
			services: []corev1.Service{newSvc("default", "redis-master", "10.254.208.57").port("", 6379).obj()},
			ports:    map[ServicePortName]int{pn("default", "redis-master", ""): 42872},
		},
		{
			// The ingress ip gets portals as a cluster IP does.
			name:     "loadbalancer",
			services: []corev1.Service{newSvc("default", "frontend", "20.1.244.75").port("", 80).nodePort(30001).loadBalancer("192.168.1.130").obj()},
			ports:    map[ServicePortName]int{pn("default", "frontend", ""): 59528},
		},
		{
			name: "nodeport-and-named-ports",
			services: []corev1.Service{
				newSvc("default", "frontend", "20.1.244.75").port("", 80).nodePort(30001).obj(),
				newSvc("default", "kubernetes", "20.1.0.1").port("https", 443).port("metrics", 8080).obj(),
				newSvc("default", "headless", corev1.ClusterIPNone).port("", 80).obj(),
			},
			ports: map[ServicePortName]int{
				pn("default", "frontend", ""):          59528,
				pn("default", "kubernetes", "https"):   60339,
				pn("default", "kubernetes", "metrics"): 60340,
			},
		},
		{
			name: "udp-dns-and-nodeport",
			services: []corev1.Service{
				newSvc("kube-system", "kube-dns", "10.254.0.53").udp("dns", 53).port("dns-tcp", 53).obj(),
				newSvc("default", "syslog", "10.254.0.70").udp("", 514).nodePort(30514).obj(),
			},
			ports: map[ServicePortName]int{
				pn("kube-system", "kube-dns", "dns"):     41053,
				pn("kube-system", "kube-dns", "dns-tcp"): 41054,
				pn("default", "syslog", ""):              41514,
			},
		},
		{
			name:     "no-proxy-port-no-rule",
			services: []corev1.Service{newSvc("default", "web", "20.1.0.9").port("http", 80).obj()},
			ports:    map[ServicePortName]int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, "userspace-"+tt.name, UserspaceRules(tt.services, tt.ports, node).Save())
		})
	}
}

func TestProbability(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{2, "0.50000000000"}, {3, "0.33333333349"}, {4, "0.25000000000"}, {10, "0.10000000009"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := probability(tt.n); got != tt.want {
				t.Errorf("probability(%d) = %s, want %s", tt.n, got, tt.want)
			}
		})
	}
}

func TestQuoteSave(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ab", "ab"}, {"a-b_1", "a-b_1"}, {"default/web:http", `"default/web:http"`}, {"a b", `"a b"`}, {`a"b`, `"a\"b"`}, {"", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := quoteSave(tt.in); got != tt.want {
				t.Errorf("quoteSave(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}
