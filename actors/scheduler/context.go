package scheduler

import (
	corev1 "k8s.io/api/core/v1"
)

// PodContext is what the predicates and priorities need to know about one pod beyond
// a single node: its own request (parsed once, not once per node) and the cross-node
// facts about its service. Build it once per pod, with NewPodContext or
// Cache.Context, and share it read-only across every node and shard.
type PodContext struct {
	pod      *corev1.Pod
	u        usage
	selector []labelPair

	// Service is namespace/name of the pod's first service (by name), "" if none.
	Service string
	// ServicePods is the number of that service's pods on nodes (assumed included).
	ServicePods int
	// MaxPerNode is the largest number of the service's pods on any one node.
	MaxPerNode int

	perSlot     []int32                   // service pods by node slot
	labelCounts map[string]map[string]int // label -> value -> service pods on nodes with it
	affinity    map[string]string         // service-affinity label -> value the node must have
}

// NewPodContext parses the pod's request, host ports, disks and node selector. It
// knows nothing of services: ServiceSpreadingPriority then scores every node 10.
func NewPodContext(pod *corev1.Pod) *PodContext {
	return &PodContext{pod: pod, u: podUsage(pod), selector: sortedPairs(pod.Spec.NodeSelector)}
}

// Pod returns the pod the context was built for.
func (c *PodContext) Pod() *corev1.Pod { return c.pod }

// Request returns the pod's milli-CPU and memory as PodFitsResources counts them.
func (c *PodContext) Request() (milliCPU, memory int64) { return c.u.milliCPU, c.u.memory }

// ServicePodsOn returns how many pods of the pod's service the node holds.
func (c *PodContext) ServicePodsOn(n *NodeInfo) int {
	if n.slot < 0 || n.slot >= len(c.perSlot) {
		return 0
	}
	return int(c.perSlot[n.slot])
}
