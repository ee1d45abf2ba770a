package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// MaxScore is the best score a priority gives a node; 0 is the worst.
const MaxScore int64 = 10

// Priority scores a node that fits a pod, from 0 to MaxScore. What it needs beyond
// the node (counts over all nodes) comes precomputed in the PodContext.
type Priority interface {
	Name() string
	Score(pod *corev1.Pod, n *NodeInfo, ctx *PodContext) int64
}

var (
	_ Priority = LeastRequestedPriority{}
	_ Priority = BalancedResourceAllocation{}
	_ Priority = ServiceSpreadingPriority{}
	_ Priority = NodeLabelPriority{}
	_ Priority = ServiceAntiAffinity{}
	_ Priority = EqualPriority{}
)

// LeastRequestedPriority prefers the node with the most cpu and memory left once the
// pod is on it: the mean of (capacity-requested)*10/capacity over both, in integers.
type LeastRequestedPriority struct{}

func (LeastRequestedPriority) Name() string { return "LeastRequestedPriority" }

func (LeastRequestedPriority) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) int64 {
	cpu := leastRequested(n.nzMilliCPU+ctx.u.nzMilliCPU, n.allocMilliCPU)
	mem := leastRequested(n.nzMemory+ctx.u.nzMemory, n.allocMemory)
	return (cpu + mem) / 2
}

func leastRequested(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * MaxScore / capacity
}

// BalancedResourceAllocation prefers the node whose cpu and memory would be used in
// the most equal proportions: 10 - |cpuFraction - memFraction| * 10, and 0 when
// either fraction reaches 1 (an unreported capacity counts as full).
type BalancedResourceAllocation struct{}

func (BalancedResourceAllocation) Name() string { return "BalancedResourceAllocation" }

func (BalancedResourceAllocation) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) int64 {
	cpu := fraction(n.nzMilliCPU+ctx.u.nzMilliCPU, n.allocMilliCPU)
	mem := fraction(n.nzMemory+ctx.u.nzMemory, n.allocMemory)
	if cpu >= 1 || mem >= 1 {
		return 0
	}
	return int64(float64(MaxScore) - math.Abs(cpu-mem)*float64(MaxScore))
}

func fraction(requested, capacity int64) float64 {
	if capacity == 0 {
		return 1
	}
	return float64(requested) / float64(capacity)
}

// ServiceSpreadingPriority prefers nodes with few pods of the pod's first service:
// 10 * (max - count) / max, where max is the largest count on any node; 10 everywhere
// when the service has no pods yet (or the pod has no service).
type ServiceSpreadingPriority struct{}

func (ServiceSpreadingPriority) Name() string { return "ServiceSpreadingPriority" }

func (ServiceSpreadingPriority) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) int64 {
	if ctx.MaxPerNode == 0 {
		return MaxScore
	}
	m := int64(ctx.MaxPerNode)
	return MaxScore * (m - int64(ctx.ServicePodsOn(n))) / m
}

// NodeLabelPriority (policy argument labelPreference) scores 10 when the node's having
// the label matches Presence, else 0.
type NodeLabelPriority struct {
	Label    string
	Presence bool
}

func (NodeLabelPriority) Name() string { return "NodeLabelPriority" }

func (p NodeLabelPriority) Score(_ *corev1.Pod, n *NodeInfo, _ *PodContext) int64 {
	if _, has := n.labels[p.Label]; has == p.Presence {
		return MaxScore
	}
	return 0
}

// ServiceAntiAffinity (policy argument serviceAntiAffinity) spreads a service over the
// values of a label (zones, racks): 10 * (servicePods - podsInThisValue) / servicePods
// for a node with the label, 10 if the service has no pods, 0 for a node without it.
type ServiceAntiAffinity struct {
	Label string
}

func (ServiceAntiAffinity) Name() string { return "ServiceAntiAffinity" }

func (p ServiceAntiAffinity) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) int64 {
	v, ok := n.labels[p.Label]
	if !ok {
		return 0
	}
	if ctx.ServicePods == 0 {
		return MaxScore
	}
	total := int64(ctx.ServicePods)
	return MaxScore * (total - int64(ctx.labelCounts[p.Label][v])) / total
}

// EqualPriority scores every node 1; it is what a policy without priorities uses.
type EqualPriority struct{}

func (EqualPriority) Name() string { return "EqualPriority" }

func (EqualPriority) Score(*corev1.Pod, *NodeInfo, *PodContext) int64 { return 1 }
