package podnet

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
)

// Route is the direct route to another node's pods: its pod CIDR via its node IP.
type Route struct {
	PodCIDR string
	NodeIP  string
}

// RouteProtocol is the rtm_protocol that marks the routes this package installs
// ("proto 75" in `ip route`); routes with any other protocol are never touched.
const RouteProtocol = 75

// hop is one parsed route: a destination prefix via a gateway.
type hop struct {
	Dst netip.Prefix
	Via netip.Addr
}

func (h hop) String() string { return h.Dst.String() + " via " + h.Via.String() }

// routePlan is what SyncRoutes changes in the routing table.
type routePlan struct {
	Replace []hop    // wanted and missing or with another gateway
	Delete  []hop    // installed by us and no longer wanted
	Skipped []string // why a wanted route is not installed
}

// planRoutes compares the wanted routes with the ones installed with RouteProtocol.
// A node without a pod CIDR or IP yet is skipped silently; a malformed entry, one
// overlapping the own pod CIDR, and CIDRs claimed by two nodes are skipped with a
// reason. Lists are sorted by destination.
func planRoutes(own netip.Prefix, want []Route, installed []hop) routePlan {
	var plan routePlan
	wanted := map[netip.Prefix]netip.Addr{}
	conflicted := map[netip.Prefix]bool{}
	for _, r := range want {
		if r.PodCIDR == "" || r.NodeIP == "" {
			continue
		}
		dst, err := netip.ParsePrefix(r.PodCIDR)
		if err != nil || !dst.Addr().Is4() {
			plan.Skipped = append(plan.Skipped, fmt.Sprintf("pod CIDR %q of node %s is not an IPv4 CIDR", r.PodCIDR, r.NodeIP))
			continue
		}
		dst = dst.Masked()
		via, err := netip.ParseAddr(r.NodeIP)
		if err != nil || !via.Is4() {
			plan.Skipped = append(plan.Skipped, fmt.Sprintf("node IP %q for %s is not an IPv4 address", r.NodeIP, dst))
			continue
		}
		if dst.Overlaps(own) {
			if dst != own {
				plan.Skipped = append(plan.Skipped, fmt.Sprintf("pod CIDR %s of node %s overlaps the own pod CIDR %s", dst, via, own))
			}
			continue
		}
		if prev, ok := wanted[dst]; ok && prev != via {
			conflicted[dst] = true
			continue
		}
		wanted[dst] = via
	}
	for dst := range conflicted {
		delete(wanted, dst)
		plan.Skipped = append(plan.Skipped, fmt.Sprintf("pod CIDR %s is claimed by more than one node", dst))
	}
	have := map[netip.Prefix]netip.Addr{}
	for _, h := range installed {
		have[h.Dst] = h.Via
	}
	for dst, via := range wanted {
		if cur, ok := have[dst]; !ok || cur != via {
			plan.Replace = append(plan.Replace, hop{Dst: dst, Via: via})
		}
	}
	for dst, via := range have {
		if _, ok := wanted[dst]; !ok {
			plan.Delete = append(plan.Delete, hop{Dst: dst, Via: via})
		}
	}
	byDst := func(a, b hop) int { return comparePrefix(a.Dst, b.Dst) }
	slices.SortFunc(plan.Replace, byDst)
	slices.SortFunc(plan.Delete, byDst)
	slices.Sort(plan.Skipped)
	return plan
}

func comparePrefix(a, b netip.Prefix) int {
	return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
}
