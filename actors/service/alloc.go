package service

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Sentinel errors of allocation.
var (
	ErrAllocated  = errors.New("service: already allocated")
	ErrNotInRange = errors.New("service: not in the valid range")
	ErrFull       = errors.New("service: range is full")
)

// DefaultNodePorts is the default --service-node-port-range.
var DefaultNodePorts = utilnet.PortRange{Base: 30000, Size: 2768}

// maxIPBits bounds the size of a cluster IP range, as Kubernetes does (a /12).
const maxIPBits = 20

// Intn returns a uniform random integer in [0, n). The caller injects it (for
// example k8s.io/apimachinery/pkg/util/rand.Intn, or a seeded *rand.Rand's IntN).
type Intn func(n int) int

// AllocationError is a user-chosen IP or port that cannot be had. It unwraps to
// ErrAllocated or ErrNotInRange and becomes the field error a 422 answer carries.
type AllocationError struct {
	Value any // the IP as a string, or the port as an int32
	Err   error
	Range string // the valid range, for ErrNotInRange
}

func (e *AllocationError) Unwrap() error { return e.Err }

// Error is the Kubernetes message, without the field path.
func (e *AllocationError) Error() string {
	what, ranges := "IP", "IPs"
	if _, ok := e.Value.(int32); ok {
		what, ranges = "port", "ports"
	}
	if errors.Is(e.Err, ErrNotInRange) {
		return fmt.Sprintf("provided %s is not in the valid range. The range of valid %s is %s", what, ranges, e.Range)
	}
	return fmt.Sprintf("provided %s is already allocated", what)
}

// Field returns the error as the invalid value of the field at path.
func (e *AllocationError) Field(path *field.Path) *field.Error {
	return field.Invalid(path, e.Value, e.Error())
}

// ClusterIPPath is the field a cluster IP error is reported on.
var ClusterIPPath = field.NewPath("spec", "clusterIP")

// NodePortPath is the field a node port error of the i-th service port is reported on.
func NodePortPath(i int) *field.Path {
	return field.NewPath("spec", "ports").Index(i).Child("nodePort")
}

// IPs allocates cluster IPs from an IPv4 range. The network and broadcast addresses
// are never handed out, and the first usable address is kept for the kubernetes
// service: it is only allocated when asked for by name. The caller owns an IPs and
// serialises its use; Clone gives an independent copy.
type IPs struct {
	cidr  netip.Prefix
	first uint32 // the first usable address, offset 0
	used  bitmap // offsets of usable addresses
}

// NewIPs returns an empty allocator over cidr (an IPv4 prefix of /12 to /30).
func NewIPs(cidr netip.Prefix) (*IPs, error) {
	cidr = cidr.Masked()
	switch {
	case !cidr.IsValid() || !cidr.Addr().Is4():
		return nil, fmt.Errorf("service: cluster IP range %s: only IPv4 ranges are supported", cidr)
	case cidr.Bits() > 30:
		return nil, fmt.Errorf("service: cluster IP range %s is too small", cidr)
	case 32-cidr.Bits() > maxIPBits:
		return nil, fmt.Errorf("service: cluster IP range %s is too large (more than a /%d)", cidr, 32-maxIPBits)
	}
	size := 1<<(32-cidr.Bits()) - 2
	return &IPs{cidr: cidr, first: toUint(cidr.Addr()) + 1, used: newBitmap(size)}, nil
}

// Range is the allocator's CIDR.
func (a *IPs) Range() netip.Prefix { return a.cidr }

// Kubernetes is the address kept for the kubernetes service: the first usable one.
func (a *IPs) Kubernetes() netip.Addr { return toAddr(a.first) }

// Used and Free count allocated and free addresses.
func (a *IPs) Used() int { return a.used.count }
func (a *IPs) Free() int { return a.used.size - a.used.count }

// Clone returns an independent copy.
func (a *IPs) Clone() *IPs {
	c := *a
	c.used = a.used.clone()
	return &c
}

func (a *IPs) offset(ip netip.Addr) (int, bool) {
	if !ip.Is4() || !a.cidr.Contains(ip) {
		return 0, false
	}
	off := int(toUint(ip)) - int(a.first)
	return off, off >= 0 && off < a.used.size
}

// Has reports whether ip is allocated.
func (a *IPs) Has(ip netip.Addr) bool {
	off, ok := a.offset(ip)
	return ok && a.used.has(off)
}

// Allocate takes ip, chosen by the user. It fails with an *AllocationError when ip is
// outside the usable range or already taken.
func (a *IPs) Allocate(ip netip.Addr) error {
	off, ok := a.offset(ip)
	if !ok {
		return &AllocationError{Value: ip.String(), Err: ErrNotInRange, Range: a.cidr.String()}
	}
	if !a.used.set(off) {
		return &AllocationError{Value: ip.String(), Err: ErrAllocated}
	}
	return nil
}

// AllocateNext takes a free address at a random place in the range (never the one kept
// for the kubernetes service), or fails with ErrFull.
func (a *IPs) AllocateNext(rnd Intn) (netip.Addr, error) {
	if a.used.size <= 1 {
		return netip.Addr{}, ErrFull
	}
	off := a.used.freeFrom(1+rnd(a.used.size-1), 1)
	if off < 0 {
		return netip.Addr{}, ErrFull
	}
	a.used.set(off)
	return toAddr(a.first + uint32(off)), nil
}

// Release frees ip; releasing a free or foreign address does nothing.
func (a *IPs) Release(ip netip.Addr) {
	if off, ok := a.offset(ip); ok {
		a.used.clear(off)
	}
}

// RebuildIPs returns the allocator over cidr holding the cluster IPs of services, as
// after a restart. Services whose IP cannot be held (outside the range, or the same as
// an earlier service's) are reported, one error each, and otherwise skipped.
func RebuildIPs(cidr netip.Prefix, services []*corev1.Service) (*IPs, []error) {
	a, err := NewIPs(cidr)
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for _, s := range services {
		ip := s.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			continue
		}
		addr, err := netip.ParseAddr(ip)
		if err == nil {
			err = a.Allocate(addr)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("service %s/%s: cluster IP %s: %w", s.Namespace, s.Name, ip, err))
		}
	}
	return a, errs
}

func toUint(ip netip.Addr) uint32 {
	b := ip.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func toAddr(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Ports allocates node ports from a range (--service-node-port-range). The caller owns
// a Ports and serialises its use; Clone gives an independent copy.
type Ports struct {
	r    utilnet.PortRange
	used bitmap
}

// NewPorts returns an empty allocator over r.
func NewPorts(r utilnet.PortRange) (*Ports, error) {
	if r.Size <= 0 || r.Base <= 0 || r.Base+r.Size-1 > 65535 {
		return nil, fmt.Errorf("service: node port range %q is not a range of ports", r.String())
	}
	return &Ports{r: r, used: newBitmap(r.Size)}, nil
}

// Range is the allocator's port range.
func (a *Ports) Range() utilnet.PortRange { return a.r }

// Used and Free count allocated and free ports.
func (a *Ports) Used() int { return a.used.count }
func (a *Ports) Free() int { return a.used.size - a.used.count }

// Clone returns an independent copy.
func (a *Ports) Clone() *Ports {
	c := *a
	c.used = a.used.clone()
	return &c
}

// Has reports whether port is allocated.
func (a *Ports) Has(port int32) bool {
	return a.r.Contains(int(port)) && a.used.has(int(port)-a.r.Base)
}

// Allocate takes port, chosen by the user. It fails with an *AllocationError when port
// is outside the range or already taken.
func (a *Ports) Allocate(port int32) error {
	if !a.r.Contains(int(port)) {
		return &AllocationError{Value: port, Err: ErrNotInRange, Range: a.r.String()}
	}
	if !a.used.set(int(port) - a.r.Base) {
		return &AllocationError{Value: port, Err: ErrAllocated}
	}
	return nil
}

// AllocateNext takes a free port at a random place in the range, or fails with ErrFull.
func (a *Ports) AllocateNext(rnd Intn) (int32, error) {
	off := a.used.freeFrom(rnd(a.used.size), 0)
	if off < 0 {
		return 0, ErrFull
	}
	a.used.set(off)
	return int32(a.r.Base + off), nil
}

// Release frees port; releasing a free or foreign port does nothing.
func (a *Ports) Release(port int32) {
	if a.r.Contains(int(port)) {
		a.used.clear(int(port) - a.r.Base)
	}
}

// RebuildPorts returns the allocator over r holding the node ports of services, as
// after a restart. One service may use a node port for several of its ports (TCP and
// UDP); a port outside the range or held by an earlier service is reported.
func RebuildPorts(r utilnet.PortRange, services []*corev1.Service) (*Ports, []error) {
	a, err := NewPorts(r)
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for _, s := range services {
		mine := map[int32]bool{}
		for _, p := range s.Spec.Ports {
			if p.NodePort == 0 || mine[p.NodePort] {
				continue
			}
			mine[p.NodePort] = true
			if err := a.Allocate(p.NodePort); err != nil {
				errs = append(errs, fmt.Errorf("service %s/%s: node port %s: %w", s.Namespace, s.Name, strconv.Itoa(int(p.NodePort)), err))
			}
		}
	}
	return a, errs
}

// ClusterIPClaim and NodePortClaim name the store claims (persistence's
// Options.Claims) of a service's cluster IP and node ports: no two services may hold
// one.
func ClusterIPClaim(ip netip.Addr) string { return "clusterip/" + ip.String() }

// NodePortClaim: see ClusterIPClaim.
func NodePortClaim(port int32) string { return "nodeport/" + strconv.Itoa(int(port)) }

// Claims are the claims of what svc holds: its cluster IP (unless headless) and its
// node ports, each once.
func Claims(svc *corev1.Service) []string {
	var out []string
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
		out = append(out, ClusterIPClaim(ip))
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			if c := NodePortClaim(p.NodePort); !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}
