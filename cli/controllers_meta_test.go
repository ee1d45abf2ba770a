package cli

import (
	"net/netip"
	"testing"

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
