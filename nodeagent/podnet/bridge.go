package podnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// DefaultBridgeName is the bridge used when Config.BridgeName is empty.
const DefaultBridgeName = "kbr0"

// Config describes a node's pod network.
type Config struct {
	BridgeName string // DefaultBridgeName when empty
	PodCIDR    string // the node's spec.podCIDR, e.g. 10.244.1.0/24
	MTU        int    // of the bridge and the veths; 0: the MTU of the default route's device, else 1500
	// NetNS is the path of the network namespace the bridge lives in (for example
	// /var/run/netns/host1). Empty: the namespace of the thread calling New, which is
	// the agent's own unless the caller moved its thread.
	NetNS string
}

// Bridge is a node's pod network: a Linux bridge (default name "kbr0") in the agent's
// network namespace holding the first address of the node's pod CIDR, with IP
// forwarding on. Its methods are safe for concurrent use.
type Bridge struct {
	name    string
	prefix  netip.Prefix
	gateway netip.Addr
	mtu     int
	hostNS  netns.NsHandle
	nl      *netlink.Handle // sockets in hostNS

	mu    sync.Mutex // serialises pod wiring and guards alloc
	alloc *allocator

	routeMu sync.Mutex // serialises SyncRoutes
}

// mainTable is the main routing table (RT_TABLE_MAIN).
const mainTable = 254

// New creates the bridge or adopts an existing one (an agent that restarts keeps the
// bridge and so the connectivity of its pods), gives it the gateway address (the
// first address of the pod CIDR) and turns on net.ipv4.ip_forward in its namespace.
// Call Restore next to re-reserve the addresses of the pods that are still running.
func New(cfg Config) (*Bridge, error) {
	if cfg.BridgeName == "" {
		cfg.BridgeName = DefaultBridgeName
	}
	if len(cfg.BridgeName) > 15 {
		return nil, fmt.Errorf("podnet: bridge name %q is longer than 15 characters", cfg.BridgeName)
	}
	alloc, err := newAllocator(cfg.PodCIDR)
	if err != nil {
		return nil, err
	}
	var hostNS netns.NsHandle
	if cfg.NetNS != "" {
		hostNS, err = netns.GetFromPath(cfg.NetNS)
	} else {
		hostNS, err = netns.Get()
	}
	if err != nil {
		return nil, fmt.Errorf("podnet: open host network namespace: %w", err)
	}
	nl, err := netlink.NewHandleAt(hostNS)
	if err != nil {
		hostNS.Close()
		return nil, fmt.Errorf("podnet: netlink handle: %w", err)
	}
	b := &Bridge{
		name:    cfg.BridgeName,
		prefix:  alloc.prefix,
		gateway: alloc.gateway,
		mtu:     cfg.MTU,
		hostNS:  hostNS,
		nl:      nl,
		alloc:   alloc,
	}
	if b.mtu == 0 {
		b.mtu = b.defaultMTU()
	}
	if err := b.ensureBridge(); err != nil {
		b.Close()
		return nil, err
	}
	if err := inNS(hostNS, func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644)
	}); err != nil {
		b.Close()
		return nil, fmt.Errorf("podnet: enable ip_forward: %w", err)
	}
	return b, nil
}

// Close releases the netlink socket and the namespace handle. The bridge, the pods'
// veths and the routes stay.
func (b *Bridge) Close() {
	b.nl.Close()
	b.hostNS.Close()
}

// Name is the bridge's device name.
func (b *Bridge) Name() string { return b.name }

// Gateway is the bridge's address, the pods' default gateway.
func (b *Bridge) Gateway() string { return b.gateway.String() }

// PodCIDR is the node's pod CIDR.
func (b *Bridge) PodCIDR() string { return b.prefix.String() }

// ensureBridge creates or adopts the bridge, keeps only the gateway address on it
// (a changed pod CIDR replaces the old one) and brings it up.
func (b *Bridge) ensureBridge() error {
	link, err := b.nl.LinkByName(b.name)
	switch {
	case err == nil:
		if _, ok := link.(*netlink.Bridge); !ok {
			return fmt.Errorf("podnet: %s exists and is a %s, not a bridge", b.name, link.Type())
		}
	case isNotFound(err):
		attrs := netlink.NewLinkAttrs()
		attrs.Name = b.name
		attrs.MTU = b.mtu
		if err := b.nl.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err != nil {
			return fmt.Errorf("podnet: create bridge %s: %w", b.name, err)
		}
		if link, err = b.nl.LinkByName(b.name); err != nil {
			return fmt.Errorf("podnet: bridge %s: %w", b.name, err)
		}
		// An explicitly set address stays; otherwise the bridge would take the
		// lowest address of its ports and change it as pods come and go.
		if err := b.nl.LinkSetHardwareAddr(link, link.Attrs().HardwareAddr); err != nil {
			return fmt.Errorf("podnet: pin address of %s: %w", b.name, err)
		}
	default:
		return fmt.Errorf("podnet: bridge %s: %w", b.name, err)
	}
	addrs, err := listRetry(func() ([]netlink.Addr, error) { return b.nl.AddrList(link, netlink.FAMILY_V4) })
	if err != nil {
		return fmt.Errorf("podnet: addresses of %s: %w", b.name, err)
	}
	want := b.gatewayNet()
	have := false
	for _, a := range addrs {
		if a.IPNet.String() == want.String() {
			have = true
			continue
		}
		if err := b.nl.AddrDel(link, &a); err != nil {
			return fmt.Errorf("podnet: remove %s from %s: %w", a.IPNet, b.name, err)
		}
	}
	if !have {
		if err := b.nl.AddrAdd(link, &netlink.Addr{IPNet: want}); err != nil {
			return fmt.Errorf("podnet: add %s to %s: %w", want, b.name, err)
		}
	}
	if err := b.nl.LinkSetUp(link); err != nil {
		return fmt.Errorf("podnet: up %s: %w", b.name, err)
	}
	return nil
}

// gatewayNet is the gateway with the pod CIDR's mask, e.g. 10.244.1.1/24.
func (b *Bridge) gatewayNet() *net.IPNet {
	return &net.IPNet{IP: net.IP(b.gateway.AsSlice()), Mask: net.CIDRMask(b.prefix.Bits(), 32)}
}

// defaultMTU is the MTU of the device of the host namespace's default route, or 1500.
func (b *Bridge) defaultMTU() int {
	routes, err := listRetry(func() ([]netlink.Route, error) {
		return b.nl.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: mainTable}, netlink.RT_FILTER_TABLE)
	})
	if err == nil {
		for _, r := range routes {
			if r.Dst != nil {
				if ones, _ := r.Dst.Mask.Size(); ones != 0 {
					continue
				}
			}
			if link, err := b.nl.LinkByIndex(r.LinkIndex); err == nil && link.Attrs().MTU > 0 {
				return link.Attrs().MTU
			}
		}
	}
	return 1500
}

// inNS runs fn on a thread in the network namespace ns. If the thread cannot return
// to its namespace it stays locked, and Go ends it with the goroutine.
func inNS(ns netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("return to namespace: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// isNotFound tells whether a netlink lookup failed because the link does not exist.
func isNotFound(err error) bool {
	var lnf netlink.LinkNotFoundError
	return errors.As(err, &lnf)
}

// listRetry runs a netlink dump again when the kernel interrupted it (the table
// changed meanwhile), so that the result is consistent.
func listRetry[T any](list func() ([]T, error)) ([]T, error) {
	var (
		out []T
		err error
	)
	for range 5 {
		out, err = list()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			return out, err
		}
	}
	return out, err
}
