package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
)

// Reasons a node does not take part in a decision, worded like kube-scheduler's
// FailedScheduling events so that users recognise them.
const (
	ReasonNotReady      = "node(s) were not ready"
	ReasonUnschedulable = "node(s) were unschedulable"
)

// NodeSchedulable reports whether a node may receive pods: its Ready condition is
// True and spec.unschedulable is false. Otherwise it says why not.
func NodeSchedulable(node *corev1.Node) (ok bool, reason string) {
	if node == nil {
		return false, ReasonNotReady
	}
	if node.Spec.Unschedulable {
		return false, ReasonUnschedulable
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return true, ""
			}
			break
		}
	}
	return false, ReasonNotReady
}

// NodeInfo is a node plus exact aggregates of the pods on it, assumed ones included.
// Predicates and priorities read only these aggregates, so checking a pod against a
// node costs a few comparisons and map look-ups whatever the number of pods on it.
// A NodeInfo is not safe for concurrent mutation; readers may share it while no one
// writes (the cache changes nodes only between bidding rounds).
type NodeInfo struct {
	// Hot fields first: a bid reads these and, for most pods, nothing else.
	name     string
	slot     int // index into the cache's per-node arrays; -1 outside a cache
	eligible bool

	allocMilliCPU, allocMemory, allocPods int64 // 0 means unlimited

	numPods              int64
	milliCPU, memory     int64 // what PodFitsResources counts
	nzMilliCPU, nzMemory int64 // what priorities count (v1.0 defaults for unset values)

	labels map[string]string
	ports  map[hostPort]int32
	disks  map[string][]diskMount

	touched bool   // listed in the cache's changes
	reason  string // why not eligible
	node    *corev1.Node
	pods    map[string]podEntry
}

type podEntry struct {
	u usage
}

type diskMount struct {
	pod      string
	readOnly bool
	monitors []string
}

// NewNodeInfo returns the NodeInfo of a node without pods.
func NewNodeInfo(node *corev1.Node) *NodeInfo {
	n := &NodeInfo{slot: -1}
	n.SetNode(node)
	return n
}

func newPlaceholder(name string) *NodeInfo {
	return &NodeInfo{name: name, slot: -1, reason: ReasonNotReady}
}

// SetNode replaces the node object (status updates, label changes) and keeps the pods.
// A nil node leaves a placeholder that holds pods bound to a node not (or no longer) known.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	if node == nil {
		n.labels, n.eligible, n.reason = nil, false, ReasonNotReady
		n.allocMilliCPU, n.allocMemory, n.allocPods = 0, 0, 0
		return
	}
	n.name = node.Name
	n.labels = node.Labels
	n.eligible, n.reason = NodeSchedulable(node)
	n.allocMilliCPU = allocatable(node, corev1.ResourceCPU)
	n.allocMemory = allocatable(node, corev1.ResourceMemory)
	n.allocPods = allocatable(node, corev1.ResourcePods)
}

// nodeFacts are what decisions read of a node's object, but its labels.
type nodeFacts struct {
	node                                  bool
	eligible                              bool
	reason                                string
	allocMilliCPU, allocMemory, allocPods int64
}

func (n *NodeInfo) facts() nodeFacts {
	return nodeFacts{n.node != nil, n.eligible, n.reason, n.allocMilliCPU, n.allocMemory, n.allocPods}
}

// allocatable reads status.allocatable, falling back to status.capacity (v1.0 nodes
// report only capacity). 0 means the node did not report the resource.
func allocatable(node *corev1.Node, name corev1.ResourceName) int64 {
	q, ok := node.Status.Allocatable[name]
	if !ok {
		q, ok = node.Status.Capacity[name]
	}
	if !ok {
		return 0
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Node returns the node object; nil for a placeholder.
func (n *NodeInfo) Node() *corev1.Node { return n.node }

// Name returns the node's name.
func (n *NodeInfo) Name() string { return n.name }

// Eligible reports whether the node takes part in decisions (Ready and schedulable).
func (n *NodeInfo) Eligible() (ok bool, reason string) { return n.eligible, n.reason }

// Requested returns the milli-CPU and memory bytes the node's pods request, as
// PodFitsResources counts them.
func (n *NodeInfo) Requested() (milliCPU, memory int64) { return n.milliCPU, n.memory }

// NonzeroRequested returns the amounts the priorities count: containers without a
// value count DefaultMilliCPU and DefaultMemory.
func (n *NodeInfo) NonzeroRequested() (milliCPU, memory int64) { return n.nzMilliCPU, n.nzMemory }

// Allocatable returns what the node offers; 0 means not reported (unlimited).
func (n *NodeInfo) Allocatable() (milliCPU, memory, pods int64) {
	return n.allocMilliCPU, n.allocMemory, n.allocPods
}

// NumPods returns the number of pods counted on the node.
func (n *NodeInfo) NumPods() int { return int(n.numPods) }

// HasPod reports whether the pod with key namespace/name is counted on the node.
func (n *NodeInfo) HasPod(key string) bool {
	_, ok := n.pods[key]
	return ok
}

// HostPortInUse reports whether a host port is taken on the node.
func (n *NodeInfo) HostPortInUse(proto corev1.Protocol, port int32) bool {
	return n.ports[makeHostPort(proto, port)] > 0
}

// AddPod counts a pod on the node, replacing an earlier version of the same pod. A pod
// that has terminated (Succeeded or Failed) holds nothing, so it is removed instead.
func (n *NodeInfo) AddPod(pod *corev1.Pod) {
	key := PodKey(pod)
	n.removeKey(key)
	if podpkg.Terminal(pod) {
		return
	}
	u := podUsage(pod)
	if n.pods == nil {
		n.pods = make(map[string]podEntry)
	}
	n.pods[key] = podEntry{u: u}
	n.numPods++
	n.milliCPU += u.milliCPU
	n.memory += u.memory
	n.nzMilliCPU += u.nzMilliCPU
	n.nzMemory += u.nzMemory
	for _, p := range u.ports {
		if n.ports == nil {
			n.ports = make(map[hostPort]int32)
		}
		n.ports[p]++
	}
	for _, d := range u.disks {
		if n.disks == nil {
			n.disks = make(map[string][]diskMount)
		}
		n.disks[d.key] = append(n.disks[d.key], diskMount{pod: key, readOnly: d.readOnly, monitors: d.monitors})
	}
}

// replacePod reports whether a counted pod's newer version uses the same (its
// requests, host ports and volumes), so that the node's counts stand as they are.
func (n *NodeInfo) replacePod(key string, pod *corev1.Pod) bool {
	e, ok := n.pods[key]
	return ok && e.u.equal(podUsage(pod))
}

// RemovePod stops counting a pod on the node. It subtracts exactly what AddPod added.
func (n *NodeInfo) RemovePod(pod *corev1.Pod) { n.removeKey(PodKey(pod)) }

func (n *NodeInfo) removeKey(key string) {
	e, ok := n.pods[key]
	if !ok {
		return
	}
	delete(n.pods, key)
	n.numPods--
	n.milliCPU -= e.u.milliCPU
	n.memory -= e.u.memory
	n.nzMilliCPU -= e.u.nzMilliCPU
	n.nzMemory -= e.u.nzMemory
	for _, p := range e.u.ports {
		if n.ports[p]--; n.ports[p] <= 0 {
			delete(n.ports, p)
		}
	}
	for _, d := range e.u.disks {
		ms := n.disks[d.key]
		for i := range ms {
			if ms[i].pod == key {
				ms = append(ms[:i:i], ms[i+1:]...)
				break
			}
		}
		if len(ms) == 0 {
			delete(n.disks, d.key)
		} else {
			n.disks[d.key] = ms
		}
	}
}

// PodKey returns namespace/name, the key pods are known by.
func PodKey(pod *corev1.Pod) string {
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return ns + "/" + pod.Name
}
