package scheduler

import (
	corev1 "k8s.io/api/core/v1"
)

// Predicate decides whether a pod fits a node. Not fitting is an outcome, not an
// error: it comes with a reason worded for users ("Insufficient cpu").
type Predicate interface {
	Name() string
	Fits(pod *corev1.Pod, n *NodeInfo, ctx *PodContext) (ok bool, reason string)
}

// Reasons predicates give, worded like kube-scheduler's FailedScheduling events.
const (
	ReasonInsufficientCPU    = "Insufficient cpu"
	ReasonInsufficientMemory = "Insufficient memory"
	ReasonTooManyPods        = "Too many pods"
	ReasonHostPorts          = "node(s) didn't have free ports for the requested pod ports"
	ReasonDiskConflict       = "node(s) had no available disk"
	ReasonNodeSelector       = "node(s) didn't match node selector"
	ReasonHostName           = "node(s) didn't match the requested node name"
	ReasonLabelPresence      = "node(s) didn't have the requested labels"
	ReasonServiceAffinity    = "node(s) didn't match service affinity"
)

var (
	_ Predicate = PodFitsHostPorts{}
	_ Predicate = PodFitsResources{}
	_ Predicate = NoDiskConflict{}
	_ Predicate = MatchNodeSelector{}
	_ Predicate = HostName{}
	_ Predicate = CheckNodeLabelPresence{}
	_ Predicate = CheckServiceAffinity{}
)

// PodFitsHostPorts (policy name PodFitsPorts) rejects a node where a host port the pod
// wants is already taken for the same protocol.
type PodFitsHostPorts struct{}

func (PodFitsHostPorts) Name() string { return "PodFitsPorts" }

func (PodFitsHostPorts) Fits(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) (bool, string) {
	for _, p := range ctx.u.ports {
		if n.ports[p] > 0 {
			return false, ReasonHostPorts
		}
	}
	return true, ""
}

// PodFitsResources rejects a node whose pod slots, cpu or memory cannot take the pod
// on top of what its pods already request. An unreported resource is unlimited.
type PodFitsResources struct{}

func (PodFitsResources) Name() string { return "PodFitsResources" }

func (PodFitsResources) Fits(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) (bool, string) {
	if n.allocPods > 0 && n.numPods+1 > n.allocPods {
		return false, ReasonTooManyPods
	}
	if n.allocMilliCPU > 0 && ctx.u.milliCPU > 0 && n.milliCPU+ctx.u.milliCPU > n.allocMilliCPU {
		return false, ReasonInsufficientCPU
	}
	if n.allocMemory > 0 && ctx.u.memory > 0 && n.memory+ctx.u.memory > n.allocMemory {
		return false, ReasonInsufficientMemory
	}
	return true, ""
}

// NoDiskConflict rejects a node where a pod already mounts the same GCE PD (unless
// both mounts are read-only), the same AWS EBS volume, or the same RBD image.
type NoDiskConflict struct{}

func (NoDiskConflict) Name() string { return "NoDiskConflict" }

func (NoDiskConflict) Fits(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) (bool, string) {
	for i := range ctx.u.disks {
		d := &ctx.u.disks[i]
		ms := n.disks[d.key]
		for j := range ms {
			if d.conflicts(&ms[j]) {
				return false, ReasonDiskConflict
			}
		}
	}
	return true, ""
}

// MatchNodeSelector (v1.0 PodSelectorMatches) requires every key/value of the pod's
// spec.nodeSelector among the node's labels.
type MatchNodeSelector struct{}

func (MatchNodeSelector) Name() string { return "MatchNodeSelector" }

func (MatchNodeSelector) Fits(_ *corev1.Pod, n *NodeInfo, ctx *PodContext) (bool, string) {
	for _, p := range ctx.selector {
		if v, ok := n.labels[p.key]; !ok || v != p.value {
			return false, ReasonNodeSelector
		}
	}
	return true, ""
}

// HostName (v1.0 PodFitsHost) confines a pod that names a node to that node.
type HostName struct{}

func (HostName) Name() string { return "HostName" }

func (HostName) Fits(pod *corev1.Pod, n *NodeInfo, _ *PodContext) (bool, string) {
	if pod.Spec.NodeName == "" || pod.Spec.NodeName == n.name {
		return true, ""
	}
	return false, ReasonHostName
}

// CheckNodeLabelPresence (policy argument labelsPresence) requires every listed label
// key on the node when Presence is true, and none of them when false. Values are ignored.
type CheckNodeLabelPresence struct {
	Labels   []string
	Presence bool
}

func (CheckNodeLabelPresence) Name() string { return "CheckNodeLabelPresence" }

func (p CheckNodeLabelPresence) Fits(_ *corev1.Pod, n *NodeInfo, _ *PodContext) (bool, string) {
	for _, l := range p.Labels {
		if _, has := n.labels[l]; has != p.Presence {
			return false, ReasonLabelPresence
		}
	}
	return true, ""
}

// CheckServiceAffinity (policy argument serviceAffinity) keeps a service's pods on
// nodes that agree on the listed labels: the value comes from the pod's nodeSelector,
// else from the node of an already placed pod of its service (Cache.Context resolves
// it); a label with no value yet constrains nothing.
type CheckServiceAffinity struct {
	Labels []string
}

func (CheckServiceAffinity) Name() string { return "CheckServiceAffinity" }

func (p CheckServiceAffinity) Fits(pod *corev1.Pod, n *NodeInfo, ctx *PodContext) (bool, string) {
	for _, l := range p.Labels {
		want, ok := pod.Spec.NodeSelector[l]
		if !ok {
			if want, ok = ctx.affinity[l]; !ok {
				continue
			}
		}
		if v, has := n.labels[l]; !has || v != want {
			return false, ReasonServiceAffinity
		}
	}
	return true, ""
}
