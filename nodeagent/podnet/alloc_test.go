package podnet

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
)

func TestParsePodCIDR(t *testing.T) {
	tests := []struct {
		name    string
		cidr    string
		want    string
		wantErr bool
	}{
		{name: "a /24", cidr: "10.244.1.0/24", want: "10.244.1.0/24"},
		{name: "host bits are masked", cidr: "10.244.1.7/24", want: "10.244.1.0/24"},
		{name: "a /30 has room for one pod", cidr: "10.0.0.0/30", want: "10.0.0.0/30"},
		{name: "a /31 has none", cidr: "10.0.0.0/31", wantErr: true},
		{name: "IPv6", cidr: "fd00::/64", wantErr: true},
		{name: "garbage", cidr: "10.244.1.0", wantErr: true},
		{name: "empty", cidr: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePodCIDR(tt.cidr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parsePodCIDR(%q) error = %v, want error %v", tt.cidr, err, tt.wantErr)
			}
			if err == nil && got.String() != tt.want {
				t.Fatalf("parsePodCIDR(%q) = %s, want %s", tt.cidr, got, tt.want)
			}
		})
	}
}

// op is one step of an allocator scenario.
type op struct {
	do      string // assign, reserve, release, retain
	key     string
	ip      string          // reserve: the address; assign: the expected one
	keep    map[string]bool // retain
	wantErr error           // nil: success; errAny: some error
}

var errAny = errors.New("any error")

func TestAllocator(t *testing.T) {
	tests := []struct {
		name string
		cidr string
		ops  []op
		held map[string]string // key → address after the steps
	}{
		{
			name: "first pod gets .2, the gateway .1 is never given",
			cidr: "10.244.1.0/24",
			ops:  []op{{do: "assign", key: "a", ip: "10.244.1.2"}, {do: "assign", key: "b", ip: "10.244.1.3"}},
			held: map[string]string{"a": "10.244.1.2", "b": "10.244.1.3"},
		},
		{
			name: "assign is idempotent per key",
			cidr: "10.244.1.0/24",
			ops:  []op{{do: "assign", key: "a", ip: "10.244.1.2"}, {do: "assign", key: "a", ip: "10.244.1.2"}},
			held: map[string]string{"a": "10.244.1.2"},
		},
		{
			name: "a released address is given again",
			cidr: "10.244.1.0/24",
			ops: []op{
				{do: "assign", key: "a", ip: "10.244.1.2"},
				{do: "assign", key: "b", ip: "10.244.1.3"},
				{do: "release", key: "a"},
				{do: "assign", key: "c", ip: "10.244.1.2"},
			},
			held: map[string]string{"b": "10.244.1.3", "c": "10.244.1.2"},
		},
		{
			name: "a /30 holds one pod, the broadcast address is never given",
			cidr: "10.0.0.0/30",
			ops: []op{
				{do: "assign", key: "a", ip: "10.0.0.2"},
				{do: "assign", key: "b", wantErr: ErrExhausted},
			},
			held: map[string]string{"a": "10.0.0.2"},
		},
		{
			name: "reserve after a restart, then assign skips it",
			cidr: "10.244.1.0/24",
			ops: []op{
				{do: "reserve", key: "a", ip: "10.244.1.2"},
				{do: "reserve", key: "b", ip: "10.244.1.9"},
				{do: "assign", key: "c", ip: "10.244.1.3"},
			},
			held: map[string]string{"a": "10.244.1.2", "b": "10.244.1.9", "c": "10.244.1.3"},
		},
		{
			name: "reserve of an address another pod holds conflicts",
			cidr: "10.244.1.0/24",
			ops: []op{
				{do: "assign", key: "a", ip: "10.244.1.2"},
				{do: "reserve", key: "b", ip: "10.244.1.2", wantErr: ErrConflict},
			},
			held: map[string]string{"a": "10.244.1.2"},
		},
		{
			name: "reserve moves a key to its real address",
			cidr: "10.244.1.0/24",
			ops: []op{
				{do: "assign", key: "a", ip: "10.244.1.2"},
				{do: "reserve", key: "a", ip: "10.244.1.7"},
				{do: "assign", key: "b", ip: "10.244.1.2"},
			},
			held: map[string]string{"a": "10.244.1.7", "b": "10.244.1.2"},
		},
		{
			name: "reserve refuses the gateway, the network, the broadcast and outsiders",
			cidr: "10.244.1.0/24",
			ops: []op{
				{do: "reserve", key: "a", ip: "10.244.1.1", wantErr: errAny},
				{do: "reserve", key: "a", ip: "10.244.1.0", wantErr: errAny},
				{do: "reserve", key: "a", ip: "10.244.1.255", wantErr: errAny},
				{do: "reserve", key: "a", ip: "10.244.2.5", wantErr: errAny},
			},
			held: map[string]string{},
		},
		{
			name: "retain releases the pods that are gone",
			cidr: "10.244.1.0/24",
			ops: []op{
				{do: "assign", key: "a", ip: "10.244.1.2"},
				{do: "assign", key: "b", ip: "10.244.1.3"},
				{do: "assign", key: "c", ip: "10.244.1.4"},
				{do: "retain", keep: map[string]bool{"b": true, "zz": true}},
				{do: "assign", key: "d", ip: "10.244.1.2"},
			},
			held: map[string]string{"b": "10.244.1.3", "d": "10.244.1.2"},
		},
		{
			name: "release of an unknown key is a no-op",
			cidr: "10.244.1.0/24",
			ops:  []op{{do: "release", key: "nobody"}},
			held: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newAllocator(tt.cidr)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range tt.ops {
				var err error
				switch o.do {
				case "assign":
					var got netip.Addr
					got, err = a.assign(o.key)
					if err == nil && got.String() != o.ip {
						t.Fatalf("step %d: assign(%s) = %s, want %s", i, o.key, got, o.ip)
					}
				case "reserve":
					err = a.reserve(o.key, netip.MustParseAddr(o.ip))
				case "release":
					a.release(o.key)
				case "retain":
					a.retain(o.keep)
				default:
					t.Fatalf("unknown op %q", o.do)
				}
				switch {
				case o.wantErr == nil && err != nil:
					t.Fatalf("step %d (%s %s): %v", i, o.do, o.key, err)
				case o.wantErr != nil && err == nil:
					t.Fatalf("step %d (%s %s): no error, want %v", i, o.do, o.key, o.wantErr)
				case o.wantErr != nil && o.wantErr != errAny && !errors.Is(err, o.wantErr):
					t.Fatalf("step %d (%s %s): error %v, want %v", i, o.do, o.key, err, o.wantErr)
				}
			}
			got := map[string]string{}
			for k, ip := range a.byKey {
				got[k] = ip.String()
				if a.byAddr[ip] != k {
					t.Fatalf("indexes disagree: byKey[%s]=%s, byAddr[%s]=%q", k, ip, ip, a.byAddr[ip])
				}
			}
			if len(a.byAddr) != len(a.byKey) {
				t.Fatalf("indexes disagree: %d keys, %d addresses", len(a.byKey), len(a.byAddr))
			}
			if len(got) != len(tt.held) {
				t.Fatalf("held %v, want %v", got, tt.held)
			}
			for k, ip := range tt.held {
				if got[k] != ip {
					t.Fatalf("held %v, want %v", got, tt.held)
				}
			}
		})
	}
}

func TestAllocatorFillsALargeCIDR(t *testing.T) {
	a, err := newAllocator("10.0.0.0/22")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[netip.Addr]bool{}
	for i := range 1021 { // 1024 minus network, gateway, broadcast
		ip, err := a.assign(fmt.Sprint("pod-", i))
		if err != nil {
			t.Fatalf("assign %d: %v", i, err)
		}
		if seen[ip] || !a.usable(ip) {
			t.Fatalf("assign %d gave %s twice or unusable", i, ip)
		}
		seen[ip] = true
	}
	if _, err := a.assign("one-too-many"); !errors.Is(err, ErrExhausted) {
		t.Fatalf("assign past the end: %v, want ErrExhausted", err)
	}
}
