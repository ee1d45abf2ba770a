package node

import (
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// Sentinel errors of pod CIDR allocation.
var (
	ErrCIDRFull       = errors.New("node: cluster CIDR is full")
	ErrCIDRAllocated  = errors.New("node: pod CIDR already allocated")
	ErrCIDRNotInRange = errors.New("node: pod CIDR not in the cluster CIDR")
)

// maxCIDRBits bounds how many pod CIDRs one cluster CIDR is cut into (2^20).
const maxCIDRBits = 20

// CIDRs allocates the nodes' pod CIDRs (--cluster-cidr cut into subnets of
// --node-cidr-mask-size bits), lowest free first. The caller owns a CIDRs and
// serialises its use.
type CIDRs struct {
	cluster netip.Prefix
	bits    int    // the subnets' prefix length
	used    []bool // by subnet index
	count   int
	next    int // no free subnet below it
}

// NewCIDRs returns an empty allocator of /maskBits subnets of cluster (IPv4).
func NewCIDRs(cluster netip.Prefix, maskBits int) (*CIDRs, error) {
	cluster = cluster.Masked()
	switch {
	case !cluster.IsValid() || !cluster.Addr().Is4():
		return nil, fmt.Errorf("node: cluster CIDR %s: only IPv4 is supported", cluster)
	case maskBits < cluster.Bits() || maskBits > 30:
		return nil, fmt.Errorf("node: pod CIDR size /%d: must be from /%d to /30", maskBits, cluster.Bits())
	case maskBits-cluster.Bits() > maxCIDRBits:
		return nil, fmt.Errorf("node: cluster CIDR %s holds more than 2^%d pod CIDRs of /%d", cluster, maxCIDRBits, maskBits)
	}
	return &CIDRs{cluster: cluster, bits: maskBits, used: make([]bool, 1<<(maskBits-cluster.Bits()))}, nil
}

// Cluster is the range the pod CIDRs are cut from.
func (a *CIDRs) Cluster() netip.Prefix { return a.cluster }

// Used and Free count allocated and free pod CIDRs.
func (a *CIDRs) Used() int { return a.count }
func (a *CIDRs) Free() int { return len(a.used) - a.count }

// index returns the subnet index of p, which must be exactly one of the subnets.
func (a *CIDRs) index(p netip.Prefix) (int, bool) {
	if !p.IsValid() || p.Bits() != a.bits || p.Masked() != p || !a.cluster.Contains(p.Addr()) {
		return 0, false
	}
	off := ipUint(p.Addr()) - ipUint(a.cluster.Addr())
	return int(off >> (32 - a.bits)), true
}

func (a *CIDRs) subnet(i int) netip.Prefix {
	base := ipUint(a.cluster.Addr()) + uint32(i)<<(32-a.bits)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(base >> 24), byte(base >> 16), byte(base >> 8), byte(base)}), a.bits)
}

// Has reports whether p is allocated.
func (a *CIDRs) Has(p netip.Prefix) bool {
	i, ok := a.index(p)
	return ok && a.used[i]
}

// Allocate takes p, chosen by someone else (a node that registered with its own
// podCIDR). It fails with ErrCIDRNotInRange when p is not one of the subnets, and with
// ErrCIDRAllocated when it is taken.
func (a *CIDRs) Allocate(p netip.Prefix) error {
	i, ok := a.index(p)
	switch {
	case !ok:
		return fmt.Errorf("%s: %w", p, ErrCIDRNotInRange)
	case a.used[i]:
		return fmt.Errorf("%s: %w", p, ErrCIDRAllocated)
	}
	a.used[i] = true
	a.count++
	return nil
}

// AllocateNext takes the lowest free pod CIDR, or fails with ErrCIDRFull.
func (a *CIDRs) AllocateNext() (netip.Prefix, error) {
	for i := a.next; i < len(a.used); i++ {
		if !a.used[i] {
			a.used[i] = true
			a.count++
			a.next = i + 1
			return a.subnet(i), nil
		}
	}
	a.next = len(a.used)
	return netip.Prefix{}, ErrCIDRFull
}

// AllocateRandom takes a free pod CIDR found from a random place (rnd returns a
// uniform integer in [0, n)), or fails with ErrCIDRFull: for an allocator that lost
// its lowest free subnet to another one allocating at the same moment.
func (a *CIDRs) AllocateRandom(rnd func(n int) int) (netip.Prefix, error) {
	n := len(a.used)
	if a.count == n {
		return netip.Prefix{}, ErrCIDRFull
	}
	start := rnd(n)
	for j := range n {
		if i := (start + j) % n; !a.used[i] {
			a.used[i] = true
			a.count++
			return a.subnet(i), nil
		}
	}
	return netip.Prefix{}, ErrCIDRFull
}

// Release frees p; releasing a free or foreign CIDR does nothing.
func (a *CIDRs) Release(p netip.Prefix) {
	if i, ok := a.index(p); ok && a.used[i] {
		a.used[i] = false
		a.count--
		a.next = min(a.next, i)
	}
}

// PodCIDR parses a node's spec.podCIDR; ok is false when it has none or it does not
// parse.
func PodCIDR(n *corev1.Node) (netip.Prefix, bool) {
	if n == nil || n.Spec.PodCIDR == "" {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(n.Spec.PodCIDR)
	return p, err == nil
}

// RebuildCIDRs returns the allocator holding the pod CIDRs of nodes, as after a
// restart. A pod CIDR outside the cluster CIDR is not the allocator's and is skipped
// silently (an agent chose it); one held by an earlier node is reported.
func RebuildCIDRs(cluster netip.Prefix, maskBits int, nodes []*corev1.Node) (*CIDRs, []error) {
	a, err := NewCIDRs(cluster, maskBits)
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for _, n := range nodes {
		p, ok := PodCIDR(n)
		if !ok {
			continue
		}
		if err := a.Allocate(p); err != nil && !errors.Is(err, ErrCIDRNotInRange) {
			errs = append(errs, fmt.Errorf("node %s: pod CIDR %w", n.Name, err))
		}
	}
	return a, errs
}

func ipUint(ip netip.Addr) uint32 {
	b := ip.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Claim is the store claim (persistence's Options.Claims) of a pod CIDR that is one
// of the allocator's subnets: no two nodes may hold it. A pod CIDR outside the
// cluster CIDR is an agent's own choice and claims nothing.
func (a *CIDRs) Claim(p netip.Prefix) (string, bool) {
	if _, ok := a.index(p); !ok {
		return "", false
	}
	return PodCIDRClaim(p), true
}

// PodCIDRClaim names the claim of pod CIDR p.
func PodCIDRClaim(p netip.Prefix) string { return "podcidr/" + p.String() }
