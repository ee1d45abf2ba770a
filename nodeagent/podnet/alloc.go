package podnet

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrExhausted is returned when every address of the pod CIDR is in use.
var ErrExhausted = errors.New("podnet: pod CIDR exhausted")

// ErrConflict is returned when an address to reserve is held by another pod.
var ErrConflict = errors.New("podnet: address held by another pod")

// allocator hands out the addresses of one IPv4 pod CIDR to pods, by pod key. The
// network address, the gateway (the first host address) and the broadcast address
// are never handed out. It is a plain value: no I/O, no locking.
type allocator struct {
	prefix  netip.Prefix // masked
	gateway netip.Addr
	last    netip.Addr // the broadcast address
	byKey   map[string]netip.Addr
	byAddr  map[netip.Addr]string
}

// parsePodCIDR parses an IPv4 CIDR with room for at least one pod (/30 or larger).
func parsePodCIDR(cidr string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("podnet: pod CIDR %q: %w", cidr, err)
	}
	if !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("podnet: pod CIDR %q is not IPv4", cidr)
	}
	if p.Bits() > 30 {
		return netip.Prefix{}, fmt.Errorf("podnet: pod CIDR %q is too small", cidr)
	}
	return p.Masked(), nil
}

func newAllocator(cidr string) (*allocator, error) {
	p, err := parsePodCIDR(cidr)
	if err != nil {
		return nil, err
	}
	return &allocator{
		prefix:  p,
		gateway: p.Addr().Next(),
		last:    lastAddr(p),
		byKey:   map[string]netip.Addr{},
		byAddr:  map[netip.Addr]string{},
	}, nil
}

// lastAddr is the highest address of an IPv4 prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	hostBits := 32 - p.Bits()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= uint32(1)<<hostBits - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// usable tells whether ip may be given to a pod.
func (a *allocator) usable(ip netip.Addr) bool {
	return a.prefix.Contains(ip) && ip != a.prefix.Addr() && ip != a.gateway && ip != a.last
}

// assign returns the address of key, allocating the lowest free one when key holds
// none.
func (a *allocator) assign(key string) (netip.Addr, error) {
	if ip, ok := a.byKey[key]; ok {
		return ip, nil
	}
	for ip := a.gateway.Next(); ip.IsValid() && ip != a.last; ip = ip.Next() {
		if _, used := a.byAddr[ip]; !used {
			a.byKey[key] = ip
			a.byAddr[ip] = key
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%w: %s", ErrExhausted, a.prefix)
}

// reserve records that key holds ip (a pod that already has its address, after a
// restart). A different address key held before is released.
func (a *allocator) reserve(key string, ip netip.Addr) error {
	if !a.usable(ip) {
		return fmt.Errorf("podnet: %s is not a pod address of %s", ip, a.prefix)
	}
	if holder, ok := a.byAddr[ip]; ok && holder != key {
		return fmt.Errorf("%w: %s is held by %s", ErrConflict, ip, holder)
	}
	a.release(key)
	a.byKey[key] = ip
	a.byAddr[ip] = key
	return nil
}

// release frees the address of key, if any.
func (a *allocator) release(key string) {
	if ip, ok := a.byKey[key]; ok {
		delete(a.byKey, key)
		delete(a.byAddr, ip)
	}
}

// retain releases the addresses of every key not in keep.
func (a *allocator) retain(keep map[string]bool) {
	for key := range a.byKey {
		if !keep[key] {
			a.release(key)
		}
	}
}
