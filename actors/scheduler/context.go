package scheduler

import (
	"strconv"

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

	// Spread names the pod's spread group (the pods selected by any service or
	// replication controller that selects the pod), "" if none.
	Spread string
	// SpreadPods is the number of the group's pods on nodes (assumed included).
	SpreadPods int
	// SpreadMax is the largest number of the group's pods on any one node.
	SpreadMax     int
	spreadPerSlot []int32 // group pods by node slot

	perSlot     []int32                   // service pods by node slot
	labelCounts map[string]map[string]int // label -> value -> service pods on nodes with it
	affinity    map[string]string         // service-affinity label -> value the node must have
	services    uint64                    // the cache's service generation perSlot belongs to

	claims string // why the pod's claims keep it from every node, "" if they do not (claims.go)
	class  string // the pod's equivalence class, see classKey
}

// NewPodContext parses the pod's request, host ports, disks and node selector. It
// knows nothing of services: ServiceSpreadingPriority then scores every node 10.
func NewPodContext(pod *corev1.Pod) *PodContext {
	c := &PodContext{pod: pod, u: podUsage(pod), selector: sortedPairs(pod.Spec.NodeSelector)}
	c.class = c.classKey()
	return c
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

// SpreadPodsOn returns how many pods of the pod's spread group the node holds.
func (c *PodContext) SpreadPodsOn(n *NodeInfo) int {
	if n.slot < 0 || n.slot >= len(c.spreadPerSlot) {
		return 0
	}
	return int(c.spreadPerSlot[n.slot])
}

// classKey names the pod's equivalence class: everything of the pod that the
// predicates and priorities of this package read (its usage, host ports, disks, node
// selector, spec.nodeName, first service and spread group). Pods with the same key get the same bid
// on every node, given the same cross-node facts. Strings are length-prefixed, so
// distinct inputs give distinct keys.
func (c *PodContext) classKey() string {
	b := make([]byte, 0, 64)
	for _, v := range []int64{c.u.milliCPU, c.u.memory, c.u.nzMilliCPU, c.u.nzMemory} {
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ',')
	}
	b = append(b, 'p')
	for _, p := range c.u.ports {
		b = strconv.AppendUint(b, uint64(p), 10)
		b = append(b, ',')
	}
	b = append(b, 'd')
	for _, d := range c.u.disks {
		b = appendString(b, d.key)
		b = strconv.AppendBool(b, d.readOnly)
		b = strconv.AppendInt(b, int64(len(d.monitors)), 10)
		for _, m := range d.monitors {
			b = appendString(b, m)
		}
	}
	b = append(b, 's')
	for _, p := range c.selector {
		b = appendString(b, p.key)
		b = appendString(b, p.value)
	}
	b = append(b, 'h')
	b = appendString(b, c.pod.Spec.NodeName)
	b = appendString(b, c.Service)
	b = appendString(b, c.Spread)
	if c.claims != "" {
		b = append(b, 'v')
		b = appendString(b, c.claims)
	}
	return string(b)
}

func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}
