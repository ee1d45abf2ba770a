package sim

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
)

func TestPoolAllocatesSequentially(t *testing.T) {
	tests := []struct {
		name      string
		cidr      string
		wantFirst []string
		wantLast  string
		capacity  int
	}{
		{"ipv4 /24 skips .0 .1 and broadcast", "10.100.3.0/24", []string{"10.100.3.2", "10.100.3.3", "10.100.3.4"}, "10.100.3.254", 253},
		{"ipv4 /30", "192.168.0.4/30", []string{"192.168.0.6"}, "192.168.0.6", 1},
		{"unmasked prefix", "10.1.2.77/24", []string{"10.1.2.2"}, "10.1.2.254", 253},
		{"ipv4 /16 crosses octets", "10.7.0.0/16", []string{"10.7.0.2", "10.7.0.3"}, "10.7.255.254", 65533},
		{"ipv6 /120", "fd00::/120", []string{"fd00::2", "fd00::3"}, "fd00::ff", 254},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPool(tt.cidr)
			if err != nil {
				t.Fatal(err)
			}
			var last netip.Addr
			for i := range tt.capacity {
				a, err := p.Allocate(fmt.Sprint("pod-", i))
				if err != nil {
					t.Fatalf("allocation %d: %v", i, err)
				}
				if i < len(tt.wantFirst) && a.String() != tt.wantFirst[i] {
					t.Errorf("allocation %d = %s, want %s", i, a, tt.wantFirst[i])
				}
				if !p.CIDR().Contains(a) {
					t.Errorf("allocation %d = %s outside %s", i, a, p.CIDR())
				}
				last = a
			}
			if last.String() != tt.wantLast {
				t.Errorf("last allocation %s, want %s", last, tt.wantLast)
			}
			if _, err := p.Allocate("one-too-many"); !errors.Is(err, ErrPoolFull) {
				t.Errorf("allocation past capacity: %v, want ErrPoolFull", err)
			}
			if p.Len() != tt.capacity {
				t.Errorf("Len %d, want %d", p.Len(), tt.capacity)
			}
		})
	}
}

func TestPoolKeysAndRelease(t *testing.T) {
	p, err := NewPool("10.100.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	ip := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	steps := []struct {
		op, key string
		addr    string // Allocate: want; Reserve: given
		ok      bool   // Reserve's answer
	}{
		{"alloc", "a", "10.100.0.2", true},
		{"alloc", "b", "10.100.0.3", true},
		{"alloc", "a", "10.100.0.2", true}, // same key, same address
		{"reserve", "c", "10.100.0.4", true},
		{"reserve", "d", "10.100.0.4", false},   // held by c
		{"reserve", "d", "10.100.0.1", false},   // the gateway
		{"reserve", "d", "10.100.0.255", false}, // broadcast
		{"reserve", "d", "10.101.0.9", false},   // outside
		{"alloc", "e", "10.100.0.5", true},      // skips c's
		{"release", "a", "", true},
		{"release", "a", "", true},         // twice is harmless
		{"alloc", "f", "10.100.0.6", true}, // a's address is reused only after wrapping
		{"reserve", "g", "10.100.0.2", true},
	}
	for i, s := range steps {
		switch s.op {
		case "alloc":
			a, err := p.Allocate(s.key)
			if err != nil || a != ip(s.addr) {
				t.Fatalf("step %d: Allocate(%s) = %s, %v; want %s", i, s.key, a, err, s.addr)
			}
		case "reserve":
			if ok := p.Reserve(s.key, ip(s.addr)); ok != s.ok {
				t.Fatalf("step %d: Reserve(%s, %s) = %v, want %v", i, s.key, s.addr, ok, s.ok)
			}
		case "release":
			p.Release(s.key)
			if _, held := p.Lookup(s.key); held {
				t.Fatalf("step %d: %s still holds an address", i, s.key)
			}
		}
	}
	if p.Len() != 5 { // b c e f g
		t.Errorf("Len %d, want 5", p.Len())
	}
}

func TestPoolWrapsToReleased(t *testing.T) {
	p, err := NewPool("10.0.0.0/29") // .2 .. .6
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := p.Allocate(fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	p.Release("1") // 10.0.0.3
	a, err := p.Allocate("new")
	if err != nil || a.String() != "10.0.0.3" {
		t.Fatalf("Allocate after release = %s, %v; want 10.0.0.3", a, err)
	}
}

func TestNewPoolRejects(t *testing.T) {
	for _, cidr := range []string{"", "10.0.0.0", "10.0.0.0/31", "10.0.0.0/32", "nonsense/24"} {
		if _, err := NewPool(cidr); err == nil {
			t.Errorf("NewPool(%q) accepted", cidr)
		}
	}
}
