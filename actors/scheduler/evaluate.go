package scheduler

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Names Evaluate gives the node checks that come before the policy's predicates (the
// scheduler leaves such nodes out of every decision), as later kube-scheduler
// versions name them.
const (
	CheckNodeCondition     = "CheckNodeCondition"
	CheckNodeUnschedulable = "CheckNodeUnschedulable"
)

// Cluster is what Evaluate reads of the cluster: the nodes, the pods (those bound to
// a node count on it; the others are ignored), and the services and replication
// controllers whose selectors group pods for spreading and service affinity.
type Cluster struct {
	Nodes       []*corev1.Node
	Pods        []*corev1.Pod
	Services    []*corev1.Service
	Controllers []*corev1.ReplicationController
	// Claims returns the stored claim of a namespace and name, nil when absent
	// (VolumeClaimsBound); a nil Claims finds none.
	Claims func(namespace, name string) *corev1.PersistentVolumeClaim
}

// NodeVerdict is one node's answer for a pod, explained: the first check that
// refused it and why, or its score per priority and the weighted total.
type NodeVerdict struct {
	Node      string          `json:"node"`
	Fits      bool            `json:"fits"`
	Predicate string          `json:"predicate,omitempty"` // the first that refused the node
	Reason    string          `json:"reason,omitempty"`
	Score     float64         `json:"score,omitempty"`  // Σ weight × score
	Scores    []PriorityScore `json:"scores,omitempty"` // per priority
	Winner    bool            `json:"winner,omitempty"`
}

// Evaluation is the decision Evaluate would make, node by node.
type Evaluation struct {
	// Nodes: every node, those that fit first by score (best first, ties by name),
	// then those refused, by name.
	Nodes    []NodeVerdict `json:"nodes"`
	Feasible int           `json:"feasible"`
	// Winner is the best-scored node that fits, "" when none does; when Ties > 1
	// nodes share its score the scheduler draws among them (TieBreak) and Winner is
	// the first of them by name.
	Winner string  `json:"winner,omitempty"`
	Score  float64 `json:"score,omitempty"`
	Ties   int     `json:"ties,omitempty"`
}

// Evaluate explains where policy would place pod in cluster now, as if the pod were
// pending: a bound pod is evaluated without its nodeName and without counting
// itself on its node. It uses the scheduler's own checks (NodeSchedulable, the
// policy's predicates, Policy.Explain) over a Cache built from cluster, so every
// verdict is the bid the scheduler would make. Pure: it changes none of its inputs.
func Evaluate(pod *corev1.Pod, cluster Cluster, policy *Policy) Evaluation {
	key := PodKey(pod)
	if pod.Spec.NodeName != "" {
		p := *pod
		p.Spec.NodeName = ""
		pod = &p
	}
	c := NewCache()
	for _, n := range cluster.Nodes {
		c.SetNode(n)
	}
	for _, s := range cluster.Services {
		c.SetService(s)
	}
	for _, rc := range cluster.Controllers {
		c.SetController(rc)
	}
	for _, p := range cluster.Pods {
		if PodKey(p) != key {
			c.SetPod(p)
		}
	}
	ctx := c.Context(pod, policy)
	if cluster.Claims != nil {
		ctx.SetClaims(ClaimsReason(pod, cluster.Claims))
	}

	var ev Evaluation
	for _, n := range c.Nodes() {
		b := policy.Explain(pod, n, ctx)
		v := NodeVerdict{Node: b.Node, Fits: b.Fits, Reason: b.Reason, Score: b.Score, Scores: b.Scores}
		if !b.Fits {
			v.Predicate = refusedBy(pod, n, ctx, policy)
		} else {
			ev.Feasible++
			switch {
			case ev.Ties == 0 || b.Score > ev.Score:
				ev.Score, ev.Ties = b.Score, 1
			case b.Score == ev.Score:
				ev.Ties++
			}
		}
		ev.Nodes = append(ev.Nodes, v)
	}
	sort.SliceStable(ev.Nodes, func(i, j int) bool {
		a, b := &ev.Nodes[i], &ev.Nodes[j]
		if a.Fits != b.Fits {
			return a.Fits
		}
		if a.Fits && a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Node < b.Node
	})
	if ev.Feasible > 0 {
		ev.Nodes[0].Winner = true
		ev.Winner = ev.Nodes[0].Node
	}
	return ev
}

// refusedBy names the check that refused n: the node's own state, or the first of the
// policy's predicates that fails, as Policy.Bid reads them.
func refusedBy(pod *corev1.Pod, n *NodeInfo, ctx *PodContext, policy *Policy) string {
	if ok, reason := n.Eligible(); !ok {
		if reason == ReasonUnschedulable {
			return CheckNodeUnschedulable
		}
		return CheckNodeCondition
	}
	for _, pr := range policy.Predicates {
		if ok, _ := pr.Fits(pod, n, ctx); !ok {
			return pr.Name()
		}
	}
	return ""
}
