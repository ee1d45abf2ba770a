package podnet

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// PodInterface is the name of the pod's end of its veth pair.
const PodInterface = "eth0"

// podNS is an open pod network namespace with a netlink socket inside it.
type podNS struct {
	ns netns.NsHandle
	nl *netlink.Handle
}

func openPodNS(pid int) (*podNS, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("podnet: invalid pid %d", pid)
	}
	ns, err := netns.GetFromPid(pid)
	if err != nil {
		return nil, fmt.Errorf("podnet: network namespace of pid %d: %w", pid, err)
	}
	nl, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		return nil, fmt.Errorf("podnet: netlink in namespace of pid %d: %w", pid, err)
	}
	return &podNS{ns: ns, nl: nl}, nil
}

func (p *podNS) close() {
	p.nl.Close()
	p.ns.Close()
}

// ipv4 returns eth0's IPv4 address inside prefix, if any.
func (p *podNS) ipv4(eth0 netlink.Link, prefix netip.Prefix) (netip.Addr, bool, error) {
	addrs, err := listRetry(func() ([]netlink.Addr, error) { return p.nl.AddrList(eth0, netlink.FAMILY_V4) })
	if err != nil {
		return netip.Addr{}, false, err
	}
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP.To4())
		if ok && (!prefix.IsValid() || prefix.Contains(ip)) {
			return ip, true, nil
		}
	}
	return netip.Addr{}, false, nil
}

// PodIP returns the IPv4 address of eth0 in the network namespace of process pid
// (the pod's infra container).
func (b *Bridge) PodIP(pid int) (string, error) {
	p, err := openPodNS(pid)
	if err != nil {
		return "", err
	}
	defer p.close()
	eth0, err := p.nl.LinkByName(PodInterface)
	if err != nil {
		return "", fmt.Errorf("podnet: %s of pid %d: %w", PodInterface, pid, err)
	}
	ip, ok, err := p.ipv4(eth0, netip.Prefix{})
	if err != nil {
		return "", fmt.Errorf("podnet: addresses of pid %d: %w", pid, err)
	}
	if !ok {
		return "", fmt.Errorf("podnet: %s of pid %d has no IPv4 address", PodInterface, pid)
	}
	return ip.String(), nil
}

// SetUpPod wires the network namespace of process pid (the pod's infra container,
// started with network mode "none") into the bridge: a veth pair whose host end is
// HostVethName(podKey) on the bridge and whose other end is eth0 in the pod with the
// pod's address and a default route via the gateway; lo comes up too. It is
// idempotent per pod key: called again (also by a restarted agent) for a pod whose
// eth0 is already wired it keeps and returns the address the pod has.
func (b *Bridge) SetUpPod(podKey string, pid int) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ip, err := b.setUpPod(podKey, pid)
	if err != nil {
		return "", fmt.Errorf("podnet: set up pod %s: %w", podKey, err)
	}
	return ip.String(), nil
}

func (b *Bridge) setUpPod(podKey string, pid int) (netip.Addr, error) {
	br, err := b.nl.LinkByName(b.name)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("bridge %s: %w", b.name, err)
	}
	p, err := openPodNS(pid)
	if err != nil {
		return netip.Addr{}, err
	}
	defer p.close()

	name := HostVethName(podKey)
	host, err := b.nl.LinkByName(name)
	if err != nil && !isNotFound(err) {
		return netip.Addr{}, fmt.Errorf("link %s: %w", name, err)
	}
	eth0, eerr := p.nl.LinkByName(PodInterface)
	if eerr != nil && !isNotFound(eerr) {
		return netip.Addr{}, fmt.Errorf("pod %s: %w", PodInterface, eerr)
	}
	// Keep an existing pair only when it joins this pod's eth0 to the host end.
	wired := err == nil && eerr == nil && eth0.Attrs().ParentIndex == host.Attrs().Index
	if !wired {
		if err == nil {
			if err := b.nl.LinkDel(host); err != nil {
				return netip.Addr{}, fmt.Errorf("delete stale %s: %w", name, err)
			}
		}
		if eerr == nil {
			if err := p.nl.LinkDel(eth0); err != nil {
				return netip.Addr{}, fmt.Errorf("delete stale pod %s: %w", PodInterface, err)
			}
		}
	}

	var ip netip.Addr
	if wired {
		have, ok, err := p.ipv4(eth0, b.prefix)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("pod addresses: %w", err)
		}
		if ok {
			if err := b.alloc.reserve(podKey, have); err != nil {
				return netip.Addr{}, err
			}
			ip = have
		}
	}
	if !ip.IsValid() {
		if ip, err = b.alloc.assign(podKey); err != nil {
			return netip.Addr{}, err
		}
	}

	if !wired {
		attrs := netlink.NewLinkAttrs()
		attrs.Name = name
		attrs.MTU = b.mtu
		attrs.MasterIndex = br.Attrs().Index
		veth := &netlink.Veth{LinkAttrs: attrs, PeerName: PodInterface, PeerNamespace: netlink.NsFd(p.ns)}
		if err := b.nl.LinkAdd(veth); err != nil {
			b.alloc.release(podKey)
			return netip.Addr{}, fmt.Errorf("create veth %s: %w", name, err)
		}
		if host, err = b.nl.LinkByName(name); err == nil {
			eth0, err = p.nl.LinkByName(PodInterface)
		}
		if err != nil {
			b.undo(podKey, name)
			return netip.Addr{}, fmt.Errorf("new veth %s: %w", name, err)
		}
	}
	if err := b.wire(p, br, host, eth0, ip); err != nil {
		if !wired {
			b.undo(podKey, name)
		}
		return netip.Addr{}, err
	}
	return ip, nil
}

// wire configures both ends of a pod's veth; every step is idempotent.
func (b *Bridge) wire(p *podNS, br, host, eth0 netlink.Link, ip netip.Addr) error {
	if host.Attrs().MasterIndex != br.Attrs().Index {
		if err := b.nl.LinkSetMasterByIndex(host, br.Attrs().Index); err != nil {
			return fmt.Errorf("attach %s to %s: %w", host.Attrs().Name, b.name, err)
		}
	}
	// Hairpin lets a pod reach itself through an address that leads back to it.
	if err := b.nl.LinkSetHairpin(host, true); err != nil {
		return fmt.Errorf("hairpin on %s: %w", host.Attrs().Name, err)
	}
	if err := b.nl.LinkSetUp(host); err != nil {
		return fmt.Errorf("up %s: %w", host.Attrs().Name, err)
	}
	if eth0.Attrs().MTU != b.mtu {
		if err := p.nl.LinkSetMTU(eth0, b.mtu); err != nil {
			return fmt.Errorf("mtu of pod %s: %w", PodInterface, err)
		}
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: net.IP(ip.AsSlice()), Mask: net.CIDRMask(b.prefix.Bits(), 32)}}
	if err := p.nl.AddrReplace(eth0, addr); err != nil {
		return fmt.Errorf("address %s on pod %s: %w", addr.IPNet, PodInterface, err)
	}
	if err := p.nl.LinkSetUp(eth0); err != nil {
		return fmt.Errorf("up pod %s: %w", PodInterface, err)
	}
	lo, err := p.nl.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("pod lo: %w", err)
	}
	if err := p.nl.LinkSetUp(lo); err != nil {
		return fmt.Errorf("up pod lo: %w", err)
	}
	def := &netlink.Route{
		LinkIndex: eth0.Attrs().Index,
		Dst:       &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
		Gw:        net.IP(b.gateway.AsSlice()),
	}
	if err := p.nl.RouteReplace(def); err != nil {
		return fmt.Errorf("default route via %s: %w", b.gateway, err)
	}
	return nil
}

// undo removes a half-made veth pair and frees its address.
func (b *Bridge) undo(podKey, name string) {
	if link, err := b.nl.LinkByName(name); err == nil {
		_ = b.nl.LinkDel(link)
	}
	b.alloc.release(podKey)
}

// TearDownPod deletes the pod's veth pair (found by HostVethName(podKey); deleting
// the host end deletes eth0 too) and frees its address. pid is only used when the
// host end is missing and the pod's namespace still holds an eth0; pass 0 when the
// infra container is gone. A pod that has no veth is not an error.
func (b *Bridge) TearDownPod(podKey string, pid int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.alloc.release(podKey)
	name := HostVethName(podKey)
	host, err := b.nl.LinkByName(name)
	switch {
	case err == nil:
		if err := b.nl.LinkDel(host); err != nil && !isNotFound(err) {
			return fmt.Errorf("podnet: tear down pod %s: delete %s: %w", podKey, name, err)
		}
		return nil
	case !isNotFound(err):
		return fmt.Errorf("podnet: tear down pod %s: link %s: %w", podKey, name, err)
	}
	if pid <= 0 {
		return nil
	}
	p, err := openPodNS(pid)
	if err != nil {
		return nil // the namespace is gone, and its eth0 with it
	}
	defer p.close()
	if eth0, err := p.nl.LinkByName(PodInterface); err == nil {
		if err := p.nl.LinkDel(eth0); err != nil {
			return fmt.Errorf("podnet: tear down pod %s: delete %s: %w", podKey, PodInterface, err)
		}
	}
	return nil
}

// Restore is for a restarted agent: it re-reserves the address of every live pod
// (pod key → pid of its infra container) from its eth0, releases every other address
// and deletes the veths on the bridge that belong to no live pod. A pod whose
// address cannot be read keeps no address; SetUpPod wires it again.
func (b *Bridge) Restore(live map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := map[string]bool{}
	names := map[string]bool{}
	for key, pid := range live {
		names[HostVethName(key)] = true
		ipStr, err := b.PodIP(pid)
		if err == nil {
			var ip netip.Addr
			if ip, err = netip.ParseAddr(ipStr); err == nil {
				err = b.alloc.reserve(key, ip)
			}
		}
		if err != nil {
			logrus.WithFields(logrus.Fields{"pod": key, "pid": pid, "error": err}).Warn("pod address not restored")
			continue
		}
		keep[key] = true
	}
	b.alloc.retain(keep)

	br, err := b.nl.LinkByName(b.name)
	if err != nil {
		return
	}
	links, err := listRetry(b.nl.LinkList)
	if err != nil {
		return
	}
	for _, l := range links {
		a := l.Attrs()
		if a.MasterIndex != br.Attrs().Index || !strings.HasPrefix(a.Name, vethPrefix) || names[a.Name] {
			continue
		}
		if err := b.nl.LinkDel(l); err != nil && !isNotFound(err) {
			logrus.WithFields(logrus.Fields{"link": a.Name, "error": err}).Warn("orphan pod veth not deleted")
		}
	}
}
