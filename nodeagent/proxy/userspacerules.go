package proxy

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Chains of the book's userspace mode.
const (
	chainPortalsContainer  = "KUBE-PORTALS-CONTAINER"
	chainPortalsHost       = "KUBE-PORTALS-HOST"
	chainNodePortContainer = "KUBE-NODEPORT-CONTAINER"
	chainNodePortHost      = "KUBE-NODEPORT-HOST"

	commentClusterIPs = "handle ClusterIPs; NOTE: this must be before the NodePort rules"
	commentNodePortsU = "handle service NodePorts; NOTE: this must be the last rule in the chain"
)

// userspaceJumps are userspace mode's rules in built-in chains (the book's §2.5.6 dump).
var userspaceJumps = []Jump{
	{Table: TableNAT, Chain: "PREROUTING", First: true, Rule: Rule{"-m", "comment", "--comment", commentClusterIPs, "-j", chainPortalsContainer}},
	{Table: TableNAT, Chain: "OUTPUT", First: true, Rule: Rule{"-m", "comment", "--comment", commentClusterIPs, "-j", chainPortalsHost}},
	{Table: TableNAT, Chain: "PREROUTING", Rule: Rule{"-m", "addrtype", "--dst-type", "LOCAL", "-m", "comment", "--comment", commentNodePortsU, "-j", chainNodePortContainer}},
	{Table: TableNAT, Chain: "OUTPUT", Rule: Rule{"-m", "addrtype", "--dst-type", "LOCAL", "-m", "comment", "--comment", commentNodePortsU, "-j", chainNodePortHost}},
}

// UserspaceRules computes the book's userspace portals: traffic to a cluster IP (or
// external IP, or NodePort) is sent to the proxy socket of its service port, given in
// proxyPorts. From containers (PREROUTING) it is a REDIRECT; from the host (OUTPUT) a
// DNAT to the node's IP. Service ports without a proxy port get no rule. Pure.
func UserspaceRules(services []corev1.Service, proxyPorts map[ServicePortName]int, node NodeInfo) Ruleset {
	ports := servicePorts(services, nil)
	chains := []Chain{
		{Table: TableNAT, Name: chainPortalsContainer},
		{Table: TableNAT, Name: chainPortalsHost},
		{Table: TableNAT, Name: chainNodePortContainer},
		{Table: TableNAT, Name: chainNodePortHost},
	}
	for _, sp := range ports {
		pp, ok := proxyPorts[sp.name]
		if !ok || pp <= 0 {
			continue
		}
		proto := strings.ToLower(string(sp.protocol))
		comment := sp.name.String()
		redirect := Rule{"-j", "REDIRECT", "--to-ports", strconv.Itoa(pp)}
		dnat := Rule{"-j", "DNAT", "--to-destination", node.IP + ":" + strconv.Itoa(pp)}
		for _, ip := range append([]string{sp.clusterIP}, sp.externalIPs...) {
			match := Rule{"-d", ip + "/32", "-p", proto, "-m", "comment", "--comment", comment, "-m", proto, "--dport", strconv.Itoa(int(sp.port))}
			chains[0].Rules = append(chains[0].Rules, join(match, redirect))
			chains[1].Rules = append(chains[1].Rules, join(match, dnat))
		}
		if sp.nodePort != 0 {
			match := Rule{"-p", proto, "-m", "comment", "--comment", comment, "-m", proto, "--dport", strconv.Itoa(int(sp.nodePort))}
			chains[2].Rules = append(chains[2].Rules, join(match, redirect))
			chains[3].Rules = append(chains[3].Rules, join(match, dnat))
		}
	}
	return Ruleset{Chains: chains, Jumps: append([]Jump(nil), userspaceJumps...)}
}
