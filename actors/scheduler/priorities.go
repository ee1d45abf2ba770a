package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// MaxScore is the best score a priority gives a node; 0 is the worst.
const MaxScore = 10.0

// Priority scores a node that fits a pod, from 0 to MaxScore. What it needs beyond
// the node (counts over all nodes) comes precomputed in the PodContext.
//
// Scores keep the v1.0 formulas but are not truncated to whole numbers: with whole
// numbers most nodes tie (one small pod more or less rarely moves a score by a
// point) and the tie-break, not the priorities, decides where pods go. A score is a
// pure function of its inputs, so equal nodes still tie exactly.
type Priority interface {
	Name() string
	Score(pod *corev1.Pod, n *NodeInfo, ctx *PodContext) float64
}

var (
	_ Priority = LeastRequestedPriority{}
	_ Priority = BalancedResourceAllocation{}
	_ Priority = ServiceSpreadingPriority{}
	_ Priority = SelectorSpreadPriority{}
	_ Priority = NodeLabelPriority{}
	_ Priority = ServiceAntiAffinity{}
	_ Priority = EqualPriority{}
)

// LeastRequestedPriority prefers the node with the most cpu and memory left once the
// pod is on it: the mean of (capacity-requested)*10/capacity over both.
type LeastRequestedPriority struct{}

func (LeastRequestedPriority) Name() string { return "LeastRequestedPriority" }

func (LeastRequestedPriority) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) float64 {
	cpu := leastRequested(n.nzMilliCPU+ctx.u.nzMilliCPU, n.allocMilliCPU)
	mem := leastRequested(n.nzMemory+ctx.u.nzMemory, n.allocMemory)
	return (cpu + mem) / 2
}

func leastRequested(requested, capacity int64) float64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return float64(capacity-requested) * MaxScore / float64(capacity)
}

// BalancedResourceAllocation prefers the node whose cpu and memory would be used in
// the most equal proportions: 10 - |cpuFraction - memFraction| * 10, and 0 when
// either fraction reaches 1 (an unreported capacity counts as full).
type BalancedResourceAllocation struct{}

func (BalancedResourceAllocation) Name() string { return "BalancedResourceAllocation" }

func (BalancedResourceAllocation) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) float64 {
	cpu := fraction(n.nzMilliCPU+ctx.u.nzMilliCPU, n.allocMilliCPU)
	mem := fraction(n.nzMemory+ctx.u.nzMemory, n.allocMemory)
	if cpu >= 1 || mem >= 1 {
		return 0
	}
	return MaxScore - math.Abs(cpu-mem)*MaxScore
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

func (ServiceSpreadingPriority) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) float64 {
	return spread(ctx.MaxPerNode, ctx.ServicePodsOn(n))
}

func spread(maxPerNode, count int) float64 {
	if maxPerNode == 0 {
		return MaxScore
	}
	return MaxScore * float64(maxPerNode-count) / float64(maxPerNode)
}

// SelectorSpreadPriority (v1.1's successor of ServiceSpreadingPriority, and the
// default provider's) prefers nodes with few pods of the pod's own group: the pods
// matching the selector of any service or replication controller that selects the
// pod, in its namespace. 10 * (max - count) / max, where max is the largest count on
// any node; 10 everywhere when the group has no pods on nodes yet (or the pod belongs
// to no service or RC). Pods assumed by the scheduler count, so a burst of identical
// pods fills the nodes level by level.
type SelectorSpreadPriority struct{}

func (SelectorSpreadPriority) Name() string { return "SelectorSpreadPriority" }

func (SelectorSpreadPriority) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) float64 {
	return spread(ctx.SpreadMax, ctx.SpreadPodsOn(n))
}

// NodeLabelPriority (policy argument labelPreference) scores 10 when the node's having
// the label matches Presence, else 0.
type NodeLabelPriority struct {
	Label    string
	Presence bool
}

func (NodeLabelPriority) Name() string { return "NodeLabelPriority" }

func (p NodeLabelPriority) Score(_ *corev1.Pod, n *NodeInfo, _ *PodContext) float64 {
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

func (p ServiceAntiAffinity) Score(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) float64 {
	v, ok := n.labels[p.Label]
	if !ok {
		return 0
	}
	if ctx.ServicePods == 0 {
		return MaxScore
	}
	total := float64(ctx.ServicePods)
	return MaxScore * (total - float64(ctx.labelCounts[p.Label][v])) / total
}

// EqualPriority scores every node 1; it is what a policy without priorities uses.
type EqualPriority struct{}

func (EqualPriority) Name() string { return "EqualPriority" }

func (EqualPriority) Score(*corev1.Pod, *NodeInfo, *PodContext) float64 { return 1 }
