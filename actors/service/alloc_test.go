package service

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

func seeded(seed uint64) Intn { return rand.New(rand.NewPCG(seed, 1)).IntN }

func mustIPs(t testing.TB, cidr string) *IPs {
	t.Helper()
	a, err := NewIPs(netip.MustParsePrefix(cidr))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustPorts(t testing.TB, base, size int) *Ports {
	t.Helper()
	a, err := NewPorts(utilnet.PortRange{Base: base, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNewIPs(t *testing.T) {
	tests := []struct {
		cidr    string
		wantErr bool
		free    int
	}{
		{"10.254.0.0/16", false, 65534},
		{"10.254.7.9/24", false, 254}, // host bits are masked
		{"10.0.0.0/30", false, 2},
		{"10.0.0.0/31", true, 0},
		{"10.0.0.0/8", true, 0},
		{"fd00::/112", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.cidr, func(t *testing.T) {
			a, err := NewIPs(netip.MustParsePrefix(tc.cidr))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && a.Free() != tc.free {
				t.Fatalf("free = %d, want %d", a.Free(), tc.free)
			}
		})
	}
}

func TestAllocateIP(t *testing.T) {
	tests := []struct {
		name    string
		taken   []string
		ip      string
		wantErr error
		wantMsg string
	}{
		{name: "free", ip: "10.254.208.57"},
		{name: "first usable, for the kubernetes service", ip: "10.254.0.1"},
		{name: "last usable", ip: "10.254.255.254"},
		{name: "taken", taken: []string{"10.254.208.57"}, ip: "10.254.208.57", wantErr: ErrAllocated,
			wantMsg: `spec.clusterIP: Invalid value: "10.254.208.57": provided IP is already allocated`},
		{name: "outside", ip: "10.0.0.1", wantErr: ErrNotInRange,
			wantMsg: `spec.clusterIP: Invalid value: "10.0.0.1": provided IP is not in the valid range. The range of valid IPs is 10.254.0.0/16`},
		{name: "network address", ip: "10.254.0.0", wantErr: ErrNotInRange},
		{name: "broadcast address", ip: "10.254.255.255", wantErr: ErrNotInRange},
		{name: "IPv6", ip: "fd00::1", wantErr: ErrNotInRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := mustIPs(t, "10.254.0.0/16")
			for _, ip := range tc.taken {
				if err := a.Allocate(netip.MustParseAddr(ip)); err != nil {
					t.Fatal(err)
				}
			}
			ip := netip.MustParseAddr(tc.ip)
			err := a.Allocate(ip)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil {
				if !a.Has(ip) || a.Used() != 1 {
					t.Fatalf("Has = %v, used %d", a.Has(ip), a.Used())
				}
				return
			}
			var ae *AllocationError
			if !errors.As(err, &ae) {
				t.Fatalf("%T is not an *AllocationError", err)
			}
			if got := ae.Field(ClusterIPPath).Error(); tc.wantMsg != "" && got != tc.wantMsg {
				t.Fatalf("message %q\nwant    %q", got, tc.wantMsg)
			}
			if a.Used() != len(tc.taken) {
				t.Fatal("a refused allocation changed the allocator")
			}
		})
	}
}

func TestAllocatePort(t *testing.T) {
	tests := []struct {
		name    string
		taken   []int32
		port    int32
		wantErr error
		wantMsg string
	}{
		{name: "free", port: 30061},
		{name: "bounds", port: 30000},
		{name: "top", port: 32767},
		{name: "taken", taken: []int32{30001}, port: 30001, wantErr: ErrAllocated,
			wantMsg: `spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated`},
		{name: "below", port: 80, wantErr: ErrNotInRange,
			wantMsg: `spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767`},
		{name: "above", port: 32768, wantErr: ErrNotInRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := mustPorts(t, DefaultNodePorts.Base, DefaultNodePorts.Size)
			for _, p := range tc.taken {
				if err := a.Allocate(p); err != nil {
					t.Fatal(err)
				}
			}
			err := a.Allocate(tc.port)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil {
				if !a.Has(tc.port) {
					t.Fatal("not held")
				}
				return
			}
			var ae *AllocationError
			if !errors.As(err, &ae) {
				t.Fatalf("%T is not an *AllocationError", err)
			}
			if got := ae.Field(NodePortPath(0)).Error(); tc.wantMsg != "" && got != tc.wantMsg {
				t.Fatalf("message %q\nwant    %q", got, tc.wantMsg)
			}
		})
	}
}

// TestExhaustion allocates every address of small ranges at random, checks that the
// kubernetes address is never handed out at random, that the range then reports
// ErrFull, and that a released address is handed out again.
func TestExhaustion(t *testing.T) {
	t.Run("ips", func(t *testing.T) {
		a := mustIPs(t, "10.0.0.0/26") // 62 usable, 61 at random
		rnd := seeded(1)
		seen := map[netip.Addr]bool{}
		for range 61 {
			ip, err := a.AllocateNext(rnd)
			if err != nil {
				t.Fatal(err)
			}
			if seen[ip] || ip == a.Kubernetes() || !a.Range().Contains(ip) || ip == netip.MustParseAddr("10.0.0.63") {
				t.Fatalf("bad allocation %v", ip)
			}
			seen[ip] = true
		}
		if _, err := a.AllocateNext(rnd); !errors.Is(err, ErrFull) {
			t.Fatalf("err = %v, want ErrFull", err)
		}
		if err := a.Allocate(a.Kubernetes()); err != nil {
			t.Fatalf("the kubernetes address: %v", err)
		}
		a.Release(netip.MustParseAddr("10.0.0.17"))
		a.Release(netip.MustParseAddr("10.0.0.17")) // twice is harmless
		a.Release(netip.MustParseAddr("192.168.0.1"))
		if ip, err := a.AllocateNext(rnd); err != nil || ip != netip.MustParseAddr("10.0.0.17") {
			t.Fatalf("after release got %v, %v", ip, err)
		}
	})
	t.Run("ports", func(t *testing.T) {
		a := mustPorts(t, 30000, 100)
		rnd := seeded(2)
		for range 100 {
			if _, err := a.AllocateNext(rnd); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.AllocateNext(rnd); !errors.Is(err, ErrFull) {
			t.Fatalf("err = %v, want ErrFull", err)
		}
		a.Release(30099)
		if p, err := a.AllocateNext(rnd); err != nil || p != 30099 {
			t.Fatalf("after release got %v, %v", p, err)
		}
	})
}

func TestClone(t *testing.T) {
	a := mustIPs(t, "10.0.0.0/24")
	b := a.Clone()
	if err := b.Allocate(netip.MustParseAddr("10.0.0.5")); err != nil {
		t.Fatal(err)
	}
	if a.Has(netip.MustParseAddr("10.0.0.5")) {
		t.Fatal("clone shares its bitmap")
	}
	p := mustPorts(t, 30000, 10)
	q := p.Clone()
	_ = q.Allocate(30001)
	if p.Has(30001) {
		t.Fatal("clone shares its bitmap")
	}
}

func svc(name, ip string, nodePorts ...int32) *corev1.Service {
	s := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: ip}}
	s.Namespace, s.Name = "default", name
	for _, p := range nodePorts {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{NodePort: p})
	}
	return s
}

func TestRebuild(t *testing.T) {
	services := []*corev1.Service{
		svc("kubernetes", "10.254.0.1"),
		svc("frontend", "10.254.208.57", 30001, 30001), // TCP and UDP on one node port
		svc("headless", "None"),
		svc("pending", ""),
		svc("clash", "10.254.208.57", 30001),
		svc("outside", "10.0.0.1", 80),
		svc("garbage", "not-an-ip"),
	}
	ips, errs := RebuildIPs(netip.MustParsePrefix("10.254.0.0/16"), services)
	if ips.Used() != 2 || !ips.Has(netip.MustParseAddr("10.254.0.1")) || !ips.Has(netip.MustParseAddr("10.254.208.57")) {
		t.Fatalf("used %d", ips.Used())
	}
	if len(errs) != 3 || !errors.Is(errs[0], ErrAllocated) || !errors.Is(errs[1], ErrNotInRange) {
		t.Fatalf("errors %v", errs)
	}
	ports, errs := RebuildPorts(DefaultNodePorts, services)
	if ports.Used() != 1 || !ports.Has(30001) {
		t.Fatalf("used %d", ports.Used())
	}
	if len(errs) != 2 || !errors.Is(errs[0], ErrAllocated) || !errors.Is(errs[1], ErrNotInRange) {
		t.Fatalf("errors %v", errs)
	}
}

// TestPropertyNoDuplicates: any interleaving of random, preferred and released
// allocations never hands out an address that is already held, and the count of
// held addresses always matches a reference set.
func TestPropertyNoDuplicates(t *testing.T) {
	for seed := range uint64(50) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			a := mustIPs(t, "10.1.0.0/22")
			held := map[netip.Addr]bool{}
			for range 3000 {
				switch r.IntN(4) {
				case 0, 1:
					ip, err := a.AllocateNext(r.IntN)
					if errors.Is(err, ErrFull) {
						if a.Free() > 1 {
							t.Fatalf("full with %d free", a.Free())
						}
						continue
					}
					if err != nil || held[ip] {
						t.Fatalf("allocated %v twice (err %v)", ip, err)
					}
					held[ip] = true
				case 2:
					ip := toAddr(toUint(netip.MustParseAddr("10.1.0.0")) + uint32(r.IntN(1024)))
					err := a.Allocate(ip)
					switch {
					case err == nil && held[ip]:
						t.Fatalf("preferred %v given twice", ip)
					case err == nil:
						held[ip] = true
					case errors.Is(err, ErrAllocated) && !held[ip]:
						t.Fatalf("%v refused as allocated, but it is free", ip)
					}
				case 3:
					for ip := range held {
						a.Release(ip)
						delete(held, ip)
						break
					}
				}
				if a.Used() != len(held) {
					t.Fatalf("used %d, held %d", a.Used(), len(held))
				}
			}
			for ip := range held {
				if !a.Has(ip) {
					t.Fatalf("%v lost", ip)
				}
			}
		})
	}
}

func BenchmarkAllocateNext65k(b *testing.B) {
	rnd := seeded(3)
	for b.Loop() {
		a := mustIPs(b, "10.254.0.0/16")
		for {
			if _, err := a.AllocateNext(rnd); err != nil {
				break
			}
		}
	}
}
