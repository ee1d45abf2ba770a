package sim

import (
	"net/netip"
	"testing"
)

func TestLayout(t *testing.T) {
	tests := []struct {
		i                  int
		name, cidr, nodeIP string
	}{
		{0, "sim-0", "10.100.0.0/24", "127.16.0.1"},
		{1, "sim-1", "10.100.1.0/24", "127.16.0.2"},
		{253, "sim-253", "10.100.253.0/24", "127.16.0.254"},
		{254, "sim-254", "10.100.254.0/24", "127.16.1.1"},
		{256, "sim-256", "10.101.0.0/24", "127.16.1.3"},
		{4999, "sim-4999", "10.119.135.0/24", "127.16.19.174"},
		{MaxNodes - 1, "sim-39935", "10.255.255.0/24", "127.16.157.58"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NodeName("sim", tt.i); got != tt.name {
				t.Errorf("NodeName = %s, want %s", got, tt.name)
			}
			cidr, err := DerivedPodCIDR(tt.i)
			if err != nil || cidr != tt.cidr {
				t.Errorf("DerivedPodCIDR = %s, %v; want %s", cidr, err, tt.cidr)
			}
			ip, err := NodeIP(tt.i)
			if err != nil || ip.String() != tt.nodeIP {
				t.Errorf("NodeIP = %s, %v; want %s", ip, err, tt.nodeIP)
			}
		})
	}
	if _, err := DerivedPodCIDR(MaxNodes); err == nil {
		t.Errorf("DerivedPodCIDR(%d) accepted", MaxNodes)
	}
}

// Every node of a full simulator has its own pod CIDR and its own node IP, and no
// node IP is a network or broadcast-looking .0 or .255.
func TestLayoutUnique(t *testing.T) {
	cidrs, ips := map[string]bool{}, map[netip.Addr]bool{}
	for i := range MaxNodes {
		cidr, err := DerivedPodCIDR(i)
		if err != nil {
			t.Fatal(err)
		}
		ip, err := NodeIP(i)
		if err != nil {
			t.Fatal(err)
		}
		if cidrs[cidr] || ips[ip] {
			t.Fatalf("node %d: %s or %s used twice", i, cidr, ip)
		}
		if b := ip.As4(); b[3] == 0 || b[3] == 255 {
			t.Fatalf("node %d: node IP %s", i, ip)
		}
		cidrs[cidr], ips[ip] = true, true
	}
}
