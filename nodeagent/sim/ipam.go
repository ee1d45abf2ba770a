package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// ErrPoolFull is returned when a node's pod CIDR has no free address left.
var ErrPoolFull = errors.New("sim: no free pod IP in the node's CIDR")

// maxPoolSize caps how many addresses of a large CIDR a pool hands out.
const maxPoolSize = 1 << 16

// Pool hands out the pod IPs of one node's CIDR, sequentially: the network address
// and the first host (the bridge's gateway, .1 in a /24) are never given, nor the
// IPv4 broadcast address. After the last address it wraps around to the lowest free
// one, so a released address is reused as late as possible. A Pool is a plain value
// with no locking; its owner serialises access.
type Pool struct {
	prefix netip.Prefix
	first  int // lowest offset handed out
	size   int // offsets [first, size) are handed out
	next   int
	used   []uint64
	byKey  map[string]netip.Addr
}

// NewPool returns the pool of cidr ("10.100.3.0/24").
func NewPool(cidr string) (*Pool, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("pod CIDR %q: %w", cidr, err)
	}
	p = p.Masked()
	hostBits := p.Addr().BitLen() - p.Bits()
	size := maxPoolSize
	if hostBits < 16 {
		size = 1 << hostBits
	}
	if p.Addr().Is4() && hostBits <= 16 {
		size-- // broadcast
	}
	if size <= 2 {
		return nil, fmt.Errorf("pod CIDR %q: too small for pods", cidr)
	}
	return &Pool{prefix: p, first: 2, size: size, next: 2, used: make([]uint64, (size+63)/64)}, nil
}

// CIDR is the pool's prefix.
func (p *Pool) CIDR() netip.Prefix { return p.prefix }

// Len is the number of addresses in use.
func (p *Pool) Len() int { return len(p.byKey) }

// Lookup returns the address key holds, if any.
func (p *Pool) Lookup(key string) (netip.Addr, bool) {
	a, ok := p.byKey[key]
	return a, ok
}

// Allocate returns the address of key (a pod uid), giving it the next free one if it
// has none yet.
func (p *Pool) Allocate(key string) (netip.Addr, error) {
	if a, ok := p.byKey[key]; ok {
		return a, nil
	}
	for range p.size - p.first {
		off := p.next
		p.next++
		if p.next == p.size {
			p.next = p.first
		}
		if !p.isUsed(off) {
			a := p.addrAt(off)
			p.mark(off, true)
			p.keys()[key] = a
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%s: %w", p.prefix, ErrPoolFull)
}

// Reserve records that key holds addr (a pod found running at start-up). It answers
// false when addr is outside the pool or held by another key.
func (p *Pool) Reserve(key string, addr netip.Addr) bool {
	if a, ok := p.byKey[key]; ok {
		return a == addr
	}
	off, ok := p.offsetOf(addr)
	if !ok || p.isUsed(off) {
		return false
	}
	p.mark(off, true)
	p.keys()[key] = addr
	return true
}

// Release frees the address of key, if it holds one.
func (p *Pool) Release(key string) {
	a, ok := p.byKey[key]
	if !ok {
		return
	}
	delete(p.byKey, key)
	if off, ok := p.offsetOf(a); ok {
		p.mark(off, false)
	}
}

func (p *Pool) keys() map[string]netip.Addr {
	if p.byKey == nil {
		p.byKey = map[string]netip.Addr{}
	}
	return p.byKey
}

func (p *Pool) isUsed(off int) bool { return p.used[off/64]&(1<<(off%64)) != 0 }

func (p *Pool) mark(off int, used bool) {
	if used {
		p.used[off/64] |= 1 << (off % 64)
	} else {
		p.used[off/64] &^= 1 << (off % 64)
	}
}

// addrAt is the prefix's base address plus off (off < size, so within the prefix).
func (p *Pool) addrAt(off int) netip.Addr {
	b := p.prefix.Addr().As16()
	binary.BigEndian.PutUint64(b[8:], binary.BigEndian.Uint64(b[8:])+uint64(off))
	a := netip.AddrFrom16(b)
	if p.prefix.Addr().Is4() {
		a = a.Unmap()
	}
	return a
}

// offsetOf is addr's distance from the prefix's base, if addr is a pool address.
func (p *Pool) offsetOf(addr netip.Addr) (int, bool) {
	if !p.prefix.Contains(addr) {
		return 0, false
	}
	a, base := addr.As16(), p.prefix.Addr().As16()
	// Pools cover at most the first maxPoolSize addresses, so a pool address shares
	// its first eight bytes with the base.
	if [8]byte(a[:8]) != [8]byte(base[:8]) {
		return 0, false
	}
	off := binary.BigEndian.Uint64(a[8:]) - binary.BigEndian.Uint64(base[8:])
	if off < uint64(p.first) || off >= uint64(p.size) {
		return 0, false
	}
	return int(off), true
}
