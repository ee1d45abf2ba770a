package proxy

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NodeInfo is what the rules need to know about the node they run on.
type NodeInfo struct {
	Name string
	// IP is the node's address: the DNAT target of host traffic in userspace mode.
	IP string
	// ClusterCIDR is the pods' range; traffic to a cluster IP from outside it is
	// masqueraded. Empty: no masquerade for cluster IPs.
	ClusterCIDR string
}

// Chains and marks of iptables mode.
const (
	chainServices    = "KUBE-SERVICES"
	chainNodePorts   = "KUBE-NODEPORTS"
	chainMarkMasq    = "KUBE-MARK-MASQ"
	chainPostrouting = "KUBE-POSTROUTING"
	masqMark         = "0x4000/0x4000"

	commentPortals     = "kubernetes service portals"
	commentPostrouting = "kubernetes postrouting rules"
	commentNodePorts   = "kubernetes service nodeports; NOTE: this must be the last rule in this chain"
	commentMasq        = "kubernetes service traffic requiring SNAT"
)

// iptablesJumps are iptables mode's rules in built-in chains.
var iptablesJumps = []Jump{
	{Table: TableNAT, Chain: "PREROUTING", First: true, Rule: Rule{"-m", "comment", "--comment", commentPortals, "-j", chainServices}},
	{Table: TableNAT, Chain: "OUTPUT", First: true, Rule: Rule{"-m", "comment", "--comment", commentPortals, "-j", chainServices}},
	{Table: TableNAT, Chain: "POSTROUTING", First: true, Rule: Rule{"-m", "comment", "--comment", commentPostrouting, "-j", chainPostrouting}},
	{Table: TableFilter, Chain: "OUTPUT", First: true, Rule: Rule{"-m", "comment", "--comment", commentPortals, "-j", chainServices}},
	{Table: TableFilter, Chain: "FORWARD", First: true, Rule: Rule{"-m", "comment", "--comment", commentPortals, "-j", chainServices}},
}

// IPTablesRules computes iptables mode's rules: the kernel DNATs a cluster IP (and
// external IPs, and a NodePort on the node's addresses) straight to an endpoint,
// chosen with even probability, or, with ClientIP affinity, the endpoint the client
// used last (-m recent). Services without endpoints are REJECTed in the filter table.
//
// Each service port has a KUBE-SVC chain. Without affinity that chain holds the
// endpoints' rules itself (see spreadRules): no per-endpoint chain, as the kernel's
// cost of a restore grows with the number of chains and rules. With ClientIP
// affinity each endpoint keeps a KUBE-SEP chain, the name of its -m recent list.
// Pure and deterministic.
func IPTablesRules(services []corev1.Service, endpoints []corev1.Endpoints, node NodeInfo) Ruleset {
	ports := servicePorts(services, endpoints)
	svcs := Chain{Table: TableNAT, Name: chainServices}
	nodePorts := Chain{Table: TableNAT, Name: chainNodePorts}
	reject := Chain{Table: TableFilter, Name: chainServices}
	var perService []Chain

	for _, sp := range ports {
		comment := sp.name.String()
		proto := strings.ToLower(string(sp.protocol))
		dport := func(port int32) Rule {
			return Rule{"-p", proto, "-m", "comment", "--comment", comment, "-m", proto, "--dport", strconv.Itoa(int(port))}
		}
		dests := append([]string{sp.clusterIP}, sp.externalIPs...)
		if len(sp.endpoints) == 0 {
			for _, ip := range dests {
				reject.Rules = append(reject.Rules, join(Rule{"-d", ip + "/32"}, dport(sp.port), Rule{"-j", "REJECT", "--reject-with", "icmp-port-unreachable"}))
			}
			if sp.nodePort != 0 {
				reject.Rules = append(reject.Rules, join(Rule{"-p", proto, "-m", "addrtype", "--dst-type", "LOCAL"}, dport(sp.nodePort)[2:], Rule{"-j", "REJECT", "--reject-with", "icmp-port-unreachable"}))
			}
			continue
		}
		svcName := svcChain(sp.name, sp.protocol)
		for i, ip := range dests {
			match := join(Rule{"-d", ip + "/32"}, dport(sp.port))
			switch {
			case i > 0: // external IPs: the traffic comes from outside
				svcs.Rules = append(svcs.Rules, join(match, Rule{"-j", chainMarkMasq}))
			case node.ClusterCIDR != "":
				svcs.Rules = append(svcs.Rules, join(Rule{"!", "-s", node.ClusterCIDR}, match, Rule{"-j", chainMarkMasq}))
			}
			svcs.Rules = append(svcs.Rules, join(match, Rule{"-j", svcName}))
		}
		if sp.nodePort != 0 {
			nodePorts.Rules = append(nodePorts.Rules,
				join(dport(sp.nodePort), Rule{"-j", chainMarkMasq}),
				join(dport(sp.nodePort), Rule{"-j", svcName}))
		}
		if sp.affinity {
			perService = append(perService, affinityChains(sp, svcName, comment, proto)...)
		} else {
			perService = append(perService, Chain{Table: TableNAT, Name: svcName, Rules: spreadRules(sp, comment, proto)})
		}
	}
	svcs.Rules = append(svcs.Rules, Rule{"-m", "comment", "--comment", commentNodePorts,
		"-m", "addrtype", "--dst-type", "LOCAL", "-j", chainNodePorts})

	chains := []Chain{
		svcs,
		nodePorts,
		{Table: TableNAT, Name: chainMarkMasq, Rules: []Rule{{"-j", "MARK", "--set-xmark", masqMark}}},
		{Table: TableNAT, Name: chainPostrouting, Rules: []Rule{{"-m", "comment", "--comment", commentMasq,
			"-m", "mark", "--mark", masqMark, "-j", "MASQUERADE"}}},
	}
	chains = append(chains, perService...)
	chains = append(chains, reject)
	return Ruleset{Chains: chains, Jumps: append([]Jump(nil), iptablesJumps...)}
}

// spreadRules are the KUBE-SVC chain of a service port without affinity: first the
// hairpin rules of all endpoints (an endpoint reaching its own service is
// masqueraded, so the reply comes back through the node), then one DNAT per
// endpoint, each taking 1/k of what the earlier ones left (k endpoints left), the
// last one everything: an even spread. The DNAT needs "-p" but no "-m tcp" (an
// extension match with no options, one more thing per rule for the kernel to load).
func spreadRules(sp servicePort, comment, proto string) []Rule {
	rules := make([]Rule, 0, 2*len(sp.endpoints))
	for _, ep := range sp.endpoints {
		rules = append(rules, hairpinRule(ep, comment))
	}
	for i, ep := range sp.endpoints {
		r := Rule{"-p", proto, "-m", "comment", "--comment", comment}
		if left := len(sp.endpoints) - i; left > 1 {
			r = append(r, statistic(left)...)
		}
		rules = append(rules, append(r, "-j", "DNAT", "--to-destination", ep))
	}
	return rules
}

// affinityChains are the KUBE-SVC chain of a service port with ClientIP affinity
// and a KUBE-SEP chain per endpoint: the KUBE-SVC chain sends a client seen within
// the timeout to the endpoint whose -m recent list holds it, else spreads evenly;
// the KUBE-SEP chain records the client in its list and DNATs.
func affinityChains(sp servicePort, svcName, comment, proto string) []Chain {
	svc := Chain{Table: TableNAT, Name: svcName}
	seps := make([]Chain, len(sp.endpoints))
	for i, ep := range sp.endpoints {
		seps[i] = Chain{Table: TableNAT, Name: sepChain(sp.name, sp.protocol, ep)}
	}
	for _, sep := range seps {
		svc.Rules = append(svc.Rules, Rule{"-m", "comment", "--comment", comment,
			"-m", "recent", "--rcheck", "--seconds", strconv.Itoa(int(sp.timeout)), "--reap",
			"--name", sep.Name, "--mask", "255.255.255.255", "--rsource", "-j", sep.Name})
	}
	for i, sep := range seps {
		r := Rule{"-m", "comment", "--comment", comment}
		if left := len(seps) - i; left > 1 {
			r = append(r, statistic(left)...)
		}
		svc.Rules = append(svc.Rules, append(r, "-j", sep.Name))
	}
	for i, ep := range sp.endpoints {
		sep := &seps[i]
		sep.Rules = append(sep.Rules,
			hairpinRule(ep, comment),
			Rule{"-p", proto, "-m", "comment", "--comment", comment,
				"-m", "recent", "--set", "--name", sep.Name, "--mask", "255.255.255.255", "--rsource",
				"-m", proto, "-j", "DNAT", "--to-destination", ep})
	}
	return append([]Chain{svc}, seps...)
}

// hairpinRule marks for masquerade the traffic an endpoint ("ip:port") sends.
func hairpinRule(ep, comment string) Rule {
	ip := ep[:strings.LastIndexByte(ep, ':')]
	return Rule{"-s", ip + "/32", "-m", "comment", "--comment", comment, "-j", chainMarkMasq}
}

// statistic matches one packet in n at random.
func statistic(n int) Rule {
	return Rule{"-m", "statistic", "--mode", "random", "--probability", probability(n)}
}

// probability is 1/n as iptables-save prints it back: the kernel keeps
// round(p * 2^31) and prints that fraction with 11 decimals.
func probability(n int) string {
	k := math.Round(float64(1<<31) / float64(n))
	return fmt.Sprintf("%.11f", k/float64(1<<31))
}

func join(parts ...Rule) Rule {
	var out Rule
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
