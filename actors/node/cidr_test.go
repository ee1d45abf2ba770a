package node

import (
	"errors"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cidrNode(name, cidr string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDR: cidr}}
}

func TestNewCIDRs(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		bits    int
		size    int // 0: refused
	}{
		{"default", "10.244.0.0/16", 24, 256},
		{"unmasked cluster", "10.244.7.1/16", 24, 256},
		{"one subnet", "10.0.0.0/24", 24, 1},
		{"mask smaller than cluster", "10.0.0.0/16", 8, 0},
		{"mask too small", "10.0.0.0/16", 31, 0},
		{"too many subnets", "10.0.0.0/8", 30, 0},
		{"ipv6", "fd00::/64", 120, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewCIDRs(netip.MustParsePrefix(tt.cluster), tt.bits)
			if tt.size == 0 {
				if err == nil {
					t.Fatalf("NewCIDRs(%s, %d) accepted", tt.cluster, tt.bits)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewCIDRs: %v", err)
			}
			if a.Free() != tt.size || a.Used() != 0 {
				t.Errorf("free %d used %d, want %d free", a.Free(), a.Used(), tt.size)
			}
		})
	}
}

func TestCIDRsAllocate(t *testing.T) {
	type step struct {
		op   string // next, take, release
		cidr string // for take and release; the expected result for next
		err  error
	}
	tests := []struct {
		name    string
		cluster string
		bits    int
		steps   []step
	}{
		{"lowest first", "10.244.0.0/16", 24, []step{
			{op: "next", cidr: "10.244.0.0/24"},
			{op: "next", cidr: "10.244.1.0/24"},
			{op: "take", cidr: "10.244.3.0/24"},
			{op: "next", cidr: "10.244.2.0/24"},
			{op: "next", cidr: "10.244.4.0/24"},
		}},
		{"release is reused lowest first", "10.244.0.0/16", 24, []step{
			{op: "next", cidr: "10.244.0.0/24"},
			{op: "next", cidr: "10.244.1.0/24"},
			{op: "next", cidr: "10.244.2.0/24"},
			{op: "release", cidr: "10.244.1.0/24"},
			{op: "release", cidr: "10.244.1.0/24"},  // twice: nothing
			{op: "release", cidr: "192.168.0.0/24"}, // foreign: nothing
			{op: "next", cidr: "10.244.1.0/24"},
			{op: "next", cidr: "10.244.3.0/24"},
		}},
		{"exhaustion", "10.0.0.0/23", 24, []step{
			{op: "next", cidr: "10.0.0.0/24"},
			{op: "next", cidr: "10.0.1.0/24"},
			{op: "next", err: ErrCIDRFull},
			{op: "release", cidr: "10.0.0.0/24"},
			{op: "next", cidr: "10.0.0.0/24"},
			{op: "next", err: ErrCIDRFull},
		}},
		{"taken and foreign", "10.244.0.0/16", 24, []step{
			{op: "take", cidr: "10.244.9.0/24"},
			{op: "take", cidr: "10.244.9.0/24", err: ErrCIDRAllocated},
			{op: "take", cidr: "10.100.0.0/24", err: ErrCIDRNotInRange},
			{op: "take", cidr: "10.244.9.0/25", err: ErrCIDRNotInRange},
			{op: "take", cidr: "10.244.9.1/24", err: ErrCIDRNotInRange},
		}},
		{"other mask size", "10.244.0.0/16", 26, []step{
			{op: "next", cidr: "10.244.0.0/26"},
			{op: "next", cidr: "10.244.0.64/26"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewCIDRs(netip.MustParsePrefix(tt.cluster), tt.bits)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				switch s.op {
				case "next":
					p, err := a.AllocateNext()
					if !errors.Is(err, s.err) || (s.err == nil && p.String() != s.cidr) {
						t.Fatalf("step %d: AllocateNext = %s, %v; want %s, %v", i, p, err, s.cidr, s.err)
					}
				case "take":
					if err := a.Allocate(netip.MustParsePrefix(s.cidr)); !errors.Is(err, s.err) {
						t.Fatalf("step %d: Allocate(%s) = %v, want %v", i, s.cidr, err, s.err)
					}
				case "release":
					a.Release(netip.MustParsePrefix(s.cidr))
					if a.Has(netip.MustParsePrefix(s.cidr)) {
						t.Fatalf("step %d: %s still allocated", i, s.cidr)
					}
				}
			}
		})
	}
}

func TestRebuildCIDRs(t *testing.T) {
	tests := []struct {
		name     string
		nodes    []*corev1.Node
		errs     int
		used     int
		wantNext string
	}{
		{"empty", nil, 0, 0, "10.244.0.0/24"},
		{"restored", []*corev1.Node{cidrNode("a", "10.244.0.0/24"), cidrNode("b", "10.244.1.0/24"), cidrNode("c", "")}, 0, 2, "10.244.2.0/24"},
		{"gap is filled", []*corev1.Node{cidrNode("a", "10.244.0.0/24"), cidrNode("b", "10.244.2.0/24")}, 0, 2, "10.244.1.0/24"},
		{"agent's own CIDRs are skipped", []*corev1.Node{cidrNode("sim-0", "10.100.0.0/24"), cidrNode("bad", "nonsense")}, 0, 0, "10.244.0.0/24"},
		{"duplicate is reported", []*corev1.Node{cidrNode("a", "10.244.0.0/24"), cidrNode("b", "10.244.0.0/24")}, 1, 1, "10.244.1.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, errs := RebuildCIDRs(netip.MustParsePrefix("10.244.0.0/16"), 24, tt.nodes)
			if len(errs) != tt.errs || a.Used() != tt.used {
				t.Fatalf("errors %v, used %d; want %d errors, %d used", errs, a.Used(), tt.errs, tt.used)
			}
			if p, err := a.AllocateNext(); err != nil || p.String() != tt.wantNext {
				t.Errorf("next = %s, %v; want %s", p, err, tt.wantNext)
			}
		})
	}
}

func TestCIDRsAllocateRandom(t *testing.T) {
	for _, start := range []int{0, 1, 3} {
		a, err := NewCIDRs(netip.MustParsePrefix("10.244.0.0/22"), 24) // 4 subnets
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Allocate(netip.MustParsePrefix("10.244.1.0/24")); err != nil {
			t.Fatal(err)
		}
		seen := map[netip.Prefix]bool{netip.MustParsePrefix("10.244.1.0/24"): true}
		for range 3 {
			p, err := a.AllocateRandom(func(int) int { return start })
			if err != nil || seen[p] {
				t.Fatalf("start %d: %v %v (seen %v)", start, p, err, seen)
			}
			seen[p] = true
		}
		if _, err := a.AllocateRandom(func(int) int { return start }); !errors.Is(err, ErrCIDRFull) {
			t.Fatalf("start %d: full allocator: %v", start, err)
		}
	}
}
