package cli

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/config"
)

// nodeControllerOptions maps the node controller's flags to actor options.
func nodeControllerOptions(nc config.NodeController) actors.NodeOptions {
	return actors.NodeOptions{
		Config: node.Config{
			MonitorGracePeriod: nc.NodeMonitorGracePeriod,
			StartupGracePeriod: nc.NodeStartupGracePeriod,
			PodEvictionTimeout: nc.PodEvictionTimeout,
			DeletingPodsQPS:    nc.DeletingPodsQPS,
			DeletingPodsBurst:  nc.DeletingPodsBurst,
		},
		MonitorPeriod: nc.NodeMonitorPeriod,
	}
}

// controllerOptions maps the node controller and service flags to actor options.
func controllerOptions(cfg config.Server) (actors.NodeOptions, actors.ServiceOptions, error) {
	nodes := nodeControllerOptions(cfg.NodeController)
	if cfg.AllocateNodeCIDRs {
		pods, err := cfg.PodCIDRs()
		if err != nil {
			return nodes, actors.ServiceOptions{}, err
		}
		nodes.PodCIDRs = actors.PodCIDROptions{Allocate: true, ClusterCIDR: pods, MaskSize: cfg.NodeCIDRMaskSize}
	}
	cidr, err := cfg.ClusterIPRange()
	if err != nil {
		return nodes, actors.ServiceOptions{}, err
	}
	base, size, err := cfg.NodePortRange()
	if err != nil {
		return nodes, actors.ServiceOptions{}, err
	}
	dns, err := cfg.ClusterDNSAddress()
	if err != nil {
		return nodes, actors.ServiceOptions{}, err
	}
	return nodes, actors.ServiceOptions{ClusterIPRange: cidr, NodePortRange: utilnet.PortRange{Base: base, Size: size}, ClusterDNS: dns}, nil
}

// advertised is the address the kubernetes service's endpoints point at: the
// --advertise-address, else the listening address, else (listening on every
// interface) the first non-loopback IPv4 address of the host, else loopback.
func advertised(cfg config.Server, listening net.Addr) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(listening.String())
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("listening address %s: %w", listening, err)
	}
	ip := ap.Addr().Unmap()
	if cfg.AdvertiseAddress != "" {
		a, err := netip.ParseAddr(cfg.AdvertiseAddress)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("--advertise-address: %w", err)
		}
		ip = a
	} else if ip.IsUnspecified() {
		ip = hostAddress()
	}
	return netip.AddrPortFrom(ip.Unmap(), ap.Port()), nil
}

func hostAddress() netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().Is4() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
					return ip.Unmap()
				}
			}
		}
	}
	return netip.MustParseAddr("127.0.0.1")
}

// podCIDRsMeta is the pod CIDR allocation as a replica's Meta gives it to members
// (metaPodCIDRs): "CIDR/mask", or "" when the servers allocate none.
func podCIDRsMeta(o actors.PodCIDROptions) string {
	if !o.Allocate {
		return ""
	}
	return o.ClusterCIDR.String() + "/" + strconv.Itoa(o.MaskSize)
}

// podCIDRsFromMeta reads podCIDRsMeta.
func podCIDRsFromMeta(v string) (actors.PodCIDROptions, error) {
	if v == "" {
		return actors.PodCIDROptions{}, nil
	}
	i := strings.LastIndexByte(v, '/')
	if i < 0 {
		return actors.PodCIDROptions{}, fmt.Errorf("pod CIDRs %q: want CIDR/mask", v)
	}
	cidr, err := netip.ParsePrefix(v[:i])
	if err != nil {
		return actors.PodCIDROptions{}, fmt.Errorf("pod CIDRs %q: %w", v, err)
	}
	mask, err := strconv.Atoi(v[i+1:])
	if err != nil {
		return actors.PodCIDROptions{}, fmt.Errorf("pod CIDRs %q: %w", v, err)
	}
	return actors.PodCIDROptions{Allocate: true, ClusterCIDR: cidr, MaskSize: mask}, nil
}

// servicesMeta is the allocation of service addresses as a replica's Meta gives it
// to members (metaServiceIPs, metaNodePorts, metaClusterDNS): a member of
// RoleControllers hosts the services' actors, whose manager allocates from these.
func servicesMeta(o actors.ServiceOptions, meta map[string]string) {
	meta[metaServiceIPs] = o.ClusterIPRange.String()
	meta[metaNodePorts] = o.NodePortRange.String()
	if o.ClusterDNS.IsValid() {
		meta[metaClusterDNS] = o.ClusterDNS.String()
	}
}

// servicesFromMeta reads servicesMeta. A server that publishes no range (an older
// one) is refused: allocating from a range of the member's own could give services
// addresses the servers' proxies do not expect.
func servicesFromMeta(meta map[string]string) (actors.ServiceOptions, error) {
	var o actors.ServiceOptions
	if meta[metaServiceIPs] == "" || meta[metaNodePorts] == "" {
		return o, fmt.Errorf("kube-apiserver publishes no %s and %s for the services this member would host: upgrade it", metaServiceIPs, metaNodePorts)
	}
	var err error
	if o.ClusterIPRange, err = netip.ParsePrefix(meta[metaServiceIPs]); err != nil {
		return o, fmt.Errorf("%s %q: %w", metaServiceIPs, meta[metaServiceIPs], err)
	}
	r, err := utilnet.ParsePortRange(meta[metaNodePorts])
	if err != nil {
		return o, fmt.Errorf("%s %q: %w", metaNodePorts, meta[metaNodePorts], err)
	}
	o.NodePortRange = *r
	if v := meta[metaClusterDNS]; v != "" {
		if o.ClusterDNS, err = netip.ParseAddr(v); err != nil {
			return o, fmt.Errorf("%s %q: %w", metaClusterDNS, v, err)
		}
	}
	return o, nil
}
