// Package proxy is the node agent's service proxy (kube-proxy): it turns Services and
// Endpoints into nat rules, as a pure function returning a Ruleset (iptables mode, or the
// book's userspace portals), applies them with go-iptables, and runs the userspace proxy
// sockets. It touches no rule it did not make and never flushes conntrack.
package proxy
