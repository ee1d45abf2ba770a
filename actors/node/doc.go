// Package node decides, as pure functions of values, what the node controller does with
// one node: mark its Ready condition Unknown when heartbeats stop, evict its pods after
// the eviction timeout at the pace of a token bucket, and label it with its hostname;
// and it allocates the nodes' pod CIDRs from the cluster CIDR.
// It does no I/O, reads no clock and logs nothing; the node actor applies its plans.
package node
