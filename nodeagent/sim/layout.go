package sim

import (
	"fmt"
	"net/netip"
	"strconv"
)

// MaxNodes is how many nodes one simulator can run: the derived pod CIDRs
// 10.100.0.0/24 ... 10.255.255.0/24 run out after that.
const MaxNodes = (256 - 100) * 256

// NodeName is the name of node i (from 0): "<prefix>-<i>", not zero-padded.
func NodeName(prefix string, i int) string { return prefix + "-" + strconv.Itoa(i) }

// DerivedPodCIDR is node i's pod CIDR when the server assigned none:
// 10.<100+i/256>.<i%256>.0/24, so node 0 has 10.100.0.0/24 and node 256 10.101.0.0/24.
func DerivedPodCIDR(i int) (string, error) {
	if i < 0 || i >= MaxNodes {
		return "", fmt.Errorf("node index %d: derived pod CIDRs exist for 0..%d", i, MaxNodes-1)
	}
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(100 + i/256), byte(i % 256), 0}), 24).String(), nil
}

// NodeIP is node i's InternalIP, in 127.16.0.0/12 and never a .0 or .255: node 0
// is 127.16.0.1, node 253 is 127.16.0.254, node 254 is 127.16.1.1. The addresses are
// loopback ones, so that whatever dials a simulated node (the API server scraping
// its /stats/summary, proxying its logs) stays on this machine and reaches the
// simulator's own server, which tells the nodes apart by the address dialled.
func NodeIP(i int) (netip.Addr, error) {
	const perBlock = 254
	block := i / perBlock
	if i < 0 || block >= 16*256 {
		return netip.Addr{}, fmt.Errorf("node index %d: no node IP in 127.16.0.0/12", i)
	}
	return netip.AddrFrom4([4]byte{127, byte(16 + block/256), byte(block % 256), byte(i%perBlock + 1)}), nil
}
