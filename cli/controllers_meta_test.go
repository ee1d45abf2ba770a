package cli

import (
	"net/netip"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeactor/kubeactor/actors"
)

// TestPodCIDRsMeta: what a server publishes of its pod CIDR allocation is what a
// member reads back, so both check the same claims.
func TestPodCIDRsMeta(t *testing.T) {
	tests := []struct {
		name    string
		in      actors.PodCIDROptions
		meta    string
		wantErr bool
	}{
		{"none", actors.PodCIDROptions{}, "", false},
		{"allocated", actors.PodCIDROptions{Allocate: true, ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), MaskSize: 24},
			"10.244.0.0/16/24", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podCIDRsMeta(tt.in); got != tt.meta {
				t.Fatalf("meta %q, want %q", got, tt.meta)
			}
			back, err := podCIDRsFromMeta(tt.meta)
			if err != nil || back != tt.in {
				t.Fatalf("read back %+v, %v; want %+v", back, err, tt.in)
			}
		})
	}
	for _, bad := range []string{"10.244.0.0", "x/24", "10.244.0.0/16/x"} {
		if _, err := podCIDRsFromMeta(bad); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}

// TestServicesMeta: the service ranges a server publishes read back as they were;
// a Meta without them, or with a damaged one, is refused.
func TestServicesMeta(t *testing.T) {
	tests := []struct {
		name string
		in   actors.ServiceOptions
	}{
		{"book's range, kube-dns", actors.ServiceOptions{ClusterIPRange: netip.MustParsePrefix("10.254.0.0/16"),
			NodePortRange: utilnet.PortRange{Base: 30000, Size: 2768}, ClusterDNS: netip.MustParseAddr("10.254.0.10")}},
		{"no kube-dns", actors.ServiceOptions{ClusterIPRange: netip.MustParsePrefix("10.9.0.0/24"),
			NodePortRange: utilnet.PortRange{Base: 31000, Size: 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := map[string]string{}
			servicesMeta(tt.in, meta)
			back, err := servicesFromMeta(meta)
			if err != nil || back != tt.in {
				t.Fatalf("read back %+v, %v; want %+v (meta %v)", back, err, tt.in, meta)
			}
		})
	}
	for _, bad := range []map[string]string{
		{},
		{metaServiceIPs: "10.254.0.0/16"},
		{metaServiceIPs: "10.254.0.0", metaNodePorts: "30000-32767"},
		{metaServiceIPs: "10.254.0.0/16", metaNodePorts: "32767-30000"},
		{metaServiceIPs: "10.254.0.0/16", metaNodePorts: "30000-32767", metaClusterDNS: "dns"},
	} {
		if _, err := servicesFromMeta(bad); err == nil {
			t.Errorf("%v read without an error", bad)
		}
	}
}
