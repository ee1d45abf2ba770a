package podnet

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/coreos/go-iptables/iptables"
)

// The chains this package owns; nothing else in the tables is touched except one
// jump into each from the built-in chain.
const (
	forwardChain = "KUBEACTOR-PODNET-FORWARD" // filter, from FORWARD
	natChain     = "KUBEACTOR-PODNET-NAT"     // nat, from POSTROUTING
)

// chainRules is the content of one owned chain and where it is jumped to from.
type chainRules struct {
	Table string
	Chain string
	From  string     // the built-in chain holding the jump, first
	Rules [][]string // rule specs, in order
}

// firewallRules are the iptables rules of a node's pod network:
//   - forward traffic from and to the pod CIDR (a host whose FORWARD policy is DROP,
//     as Docker leaves it, would otherwise drop pod traffic, also bridged traffic when
//     br_netfilter hands it to iptables);
//   - masquerade pod traffic leaving the cluster CIDR, and only that: pod-to-pod
//     traffic keeps its source address. No cluster CIDR: no masquerade.
func firewallRules(pod, cluster netip.Prefix) []chainRules {
	p := pod.String()
	out := []chainRules{{
		Table: "filter", Chain: forwardChain, From: "FORWARD",
		Rules: [][]string{
			{"-s", p, "-m", "comment", "--comment", "kubeactor pod network", "-j", "ACCEPT"},
			{"-d", p, "-m", "comment", "--comment", "kubeactor pod network", "-j", "ACCEPT"},
		},
	}}
	nat := chainRules{Table: "nat", Chain: natChain, From: "POSTROUTING"}
	if cluster.IsValid() {
		nat.Rules = [][]string{{"-s", p, "!", "-d", cluster.String(), "-m", "comment", "--comment", "kubeactor pods leaving the cluster", "-j", "MASQUERADE"}}
	}
	return append(out, nat)
}

// SyncFirewall installs the rules of firewallRules in the bridge's namespace with
// the iptables command: clusterCIDR (the server's --cluster-cidr, e.g.
// 10.244.0.0/16) is the range whose traffic is never masqueraded; "" turns the
// masquerade off. Idempotent; an owned chain is rewritten only when it differs.
func (b *Bridge) SyncFirewall(clusterCIDR string) error {
	var cluster netip.Prefix
	if clusterCIDR != "" {
		c, err := netip.ParsePrefix(clusterCIDR)
		if err != nil || !c.Addr().Is4() {
			return fmt.Errorf("podnet: cluster CIDR %q is not an IPv4 CIDR", clusterCIDR)
		}
		if !c.Masked().Contains(b.prefix.Addr()) {
			return fmt.Errorf("podnet: cluster CIDR %s does not hold the pod CIDR %s", c, b.prefix)
		}
		cluster = c.Masked()
	}
	want := firewallRules(b.prefix, cluster)
	// iptables runs as a child process, which inherits the thread's namespace.
	err := inNS(b.hostNS, func() error {
		ipt, err := iptables.New()
		if err != nil {
			return err
		}
		for _, c := range want {
			if err := syncChain(ipt, c); err != nil {
				return fmt.Errorf("%s %s: %w", c.Table, c.Chain, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("podnet: firewall: %w", err)
	}
	return nil
}

func syncChain(ipt *iptables.IPTables, c chainRules) error {
	exists, err := ipt.ChainExists(c.Table, c.Chain)
	if err != nil {
		return err
	}
	var have []string
	if exists {
		if have, err = ipt.List(c.Table, c.Chain); err != nil {
			return err
		}
	}
	wantList := []string{"-N " + c.Chain}
	for _, r := range c.Rules {
		wantList = append(wantList, "-A "+c.Chain+" "+strings.Join(quoteSpec(r), " "))
	}
	if !exists || !slices.Equal(have, wantList) {
		if err := ipt.ClearChain(c.Table, c.Chain); err != nil {
			return err
		}
		for _, r := range c.Rules {
			if err := ipt.Append(c.Table, c.Chain, r...); err != nil {
				return err
			}
		}
	}
	return ipt.InsertUnique(c.Table, c.From, 1, "-j", c.Chain)
}

// quoteSpec writes a rule spec as `iptables -S` prints it (comments in quotes).
func quoteSpec(spec []string) []string {
	out := slices.Clone(spec)
	for i := range out {
		if i > 0 && out[i-1] == "--comment" {
			out[i] = `"` + out[i] + `"`
		}
	}
	return out
}
