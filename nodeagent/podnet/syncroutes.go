package podnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/vishvananda/netlink"
)

// SyncRoutes makes the main routing table hold one route per other node's pod CIDR
// via that node's IP (the direct routing of a flat pod network) and removes the routes
// it installed earlier for nodes that are gone. Routes are marked with
// RouteProtocol; other routes are never touched. The own pod CIDR is skipped. Every
// route is tried; the error joins the failures and the reasons for skipped entries.
func (b *Bridge) SyncRoutes(routes []Route) error {
	b.routeMu.Lock()
	defer b.routeMu.Unlock()
	filter := &netlink.Route{Protocol: RouteProtocol, Table: mainTable}
	installed, err := listRetry(func() ([]netlink.Route, error) {
		return b.nl.RouteListFiltered(netlink.FAMILY_V4, filter, netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return fmt.Errorf("podnet: list routes: %w", err)
	}
	var have []hop
	for _, r := range installed {
		if r.Dst == nil {
			continue
		}
		dst, ok := netipPrefix(r.Dst)
		via, gok := netip.AddrFromSlice(r.Gw.To4())
		if ok && gok {
			have = append(have, hop{Dst: dst, Via: via})
		}
	}
	plan := planRoutes(b.prefix, routes, have)
	var errs []error
	for _, h := range plan.Replace {
		if err := b.nl.RouteReplace(h.route()); err != nil {
			errs = append(errs, fmt.Errorf("podnet: route %s: %w", h, err))
		}
	}
	for _, h := range plan.Delete {
		if err := b.nl.RouteDel(h.route()); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("podnet: delete route %s: %w", h, err))
		}
	}
	for _, reason := range plan.Skipped {
		errs = append(errs, fmt.Errorf("podnet: route skipped: %s", reason))
	}
	return errors.Join(errs...)
}

// route is the netlink form of a hop, marked as ours.
func (h hop) route() *netlink.Route {
	return &netlink.Route{
		Dst:      &net.IPNet{IP: net.IP(h.Dst.Addr().AsSlice()), Mask: net.CIDRMask(h.Dst.Bits(), 32)},
		Gw:       net.IP(h.Via.AsSlice()),
		Protocol: RouteProtocol,
		Table:    mainTable,
	}
}

func netipPrefix(n *net.IPNet) (netip.Prefix, bool) {
	ip, ok := netip.AddrFromSlice(n.IP.To4())
	if !ok {
		return netip.Prefix{}, false
	}
	ones, bits := n.Mask.Size()
	if bits != 32 {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(ip, ones).Masked(), true
}
