package kubelet

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	goruntime "runtime"
)

func goarch() string { return goruntime.GOARCH }

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }

// firstIPv4 is the first non-loopback IPv4 address of an interface that is up.
func firstIPv4() (netip.Addr, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, err
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil || !p.Addr().Is4() || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() {
				continue
			}
			if ifc.Name == "docker0" {
				continue
			}
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, errors.New("no non-loopback IPv4 address; set --node-ip")
}
