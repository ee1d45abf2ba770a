// Package podnet wires pods into the node's pod network with netlink: a Linux bridge
// holding the first address of the node's pod CIDR, a veth per pod (eth0 in the pod's
// network namespace), and direct routes to the other nodes' pod CIDRs. It never
// masquerades pod-to-pod traffic and never touches routes it did not install.
package podnet
