// Package sim runs simulated nodes, the kubemark of kubeactor: one process registers
// many nodes, posts their heartbeats staggered over the status period, and reports the
// pods bound to them Running with IPs from each node's pod CIDR. It starts no
// containers; decisions (status, addresses, schedule) are pure functions beside it.
package sim
