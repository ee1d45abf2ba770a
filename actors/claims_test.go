package actors

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestClaimsOfObjects(t *testing.T) {
	svc := func(ip string, ports ...int32) *corev1.Service {
		s := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: ip}}
		for i, p := range ports {
			proto := corev1.ProtocolTCP
			if i%2 == 1 {
				proto = corev1.ProtocolUDP
			}
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 80, NodePort: p, Protocol: proto})
		}
		return s
	}
	node := func(cidr string) *corev1.Node { return withCIDR(&corev1.Node{}, cidr) }
	tests := []struct {
		name     string
		allocate bool // pod CIDRs allocated
		resource string
		obj      runtime.Object
		want     []string
	}{
		{"a service holds its IP and node ports, each once", false, "services", svc("10.254.0.9", 30001, 30001, 30002),
			[]string{"clusterip/10.254.0.9", "nodeport/30001", "nodeport/30002"}},
		{"a headless service holds no IP", false, "services", svc(corev1.ClusterIPNone), nil},
		{"a service not yet allocated holds nothing", false, "services", svc(""), nil},
		{"a node holds a subnet of the cluster CIDR", true, "nodes", node("10.244.3.0/24"), []string{"podcidr/10.244.3.0/24"}},
		{"a node's own CIDR outside it holds nothing", true, "nodes", node("10.100.0.0/24"), nil},
		{"a prefix of another size holds nothing", true, "nodes", node("10.244.0.0/16"), nil},
		{"without allocation a node holds nothing", false, "nodes", node("10.244.3.0/24"), nil},
		{"other kinds hold nothing", true, "pods", &corev1.Pod{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims, err := Claims(cidrNodeOptions(tt.allocate))
			if err != nil {
				t.Fatal(err)
			}
			got := claims(tt.resource, tt.obj)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("claims %v, want %v", got, tt.want)
			}
			if len(got) > 0 && !slices.Contains(ClaimResources, tt.resource) {
				t.Fatalf("%s claim %v, but ClaimResources %v leaves them out: the store would not ask", tt.resource, got, ClaimResources)
			}
		})
	}
}

// TestAllocateFree: values held elsewhere are stepped over and stay marked as
// foreign; when the allocator runs out, those no longer held are given back.
func TestAllocateFree(t *testing.T) {
	used := map[netip.Prefix]bool{}
	subnets := []netip.Prefix{}
	for i := range 4 {
		subnets = append(subnets, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), 32))
	}
	next := func() (netip.Prefix, error) {
		for _, p := range subnets {
			if !used[p] {
				used[p] = true
				return p, nil
			}
		}
		return netip.Prefix{}, errors.New("full")
	}
	release := func(p netip.Prefix) { delete(used, p) }
	heldBy := map[string]bool{"p/10.0.0.0/32": true, "p/10.0.0.1/32": true}
	claim := func(p netip.Prefix) string { return "p/" + p.String() }
	held := func(c string) bool { return heldBy[c] }
	f := foreign[netip.Prefix]{}

	got, err := allocateFree(next, release, claim, held, f)
	if err != nil || got != subnets[2] {
		t.Fatalf("first: %v %v, want %v", got, err, subnets[2])
	}
	if len(f) != 2 || !used[subnets[0]] || !used[subnets[1]] {
		t.Fatalf("foreign %v, used %v: the values held elsewhere stay marked", f, used)
	}
	if got, err = allocateFree(next, release, claim, held, f); err != nil || got != subnets[3] {
		t.Fatalf("second: %v %v", got, err)
	}
	if _, err = allocateFree(next, release, claim, held, f); err == nil {
		t.Fatal("a full range allocated")
	}
	delete(heldBy, "p/10.0.0.1/32") // its object went away
	if got, err = allocateFree(next, release, claim, held, f); err != nil || got != subnets[1] {
		t.Fatalf("after the other object went: %v %v, want %v", got, err, subnets[1])
	}
	if !f.adopt(subnets[0], func(string) bool { return false }) || len(f) != 0 {
		t.Fatalf("adopt: foreign %v", f)
	}
}
