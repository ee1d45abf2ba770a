package node

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// HostnameLabel is the label every node carries with its name.
const HostnameLabel = "kubernetes.io/hostname"

// Reasons and messages of a Ready condition the controller sets to Unknown.
const (
	ReasonStatusUnknown       = "NodeStatusUnknown"
	MessageStatusUnknown      = "Kubelet stopped posting node status."
	ReasonStatusNeverUpdated  = "NodeStatusNeverUpdated"
	MessageStatusNeverUpdated = "Kubelet never posted node status."
	// Events the controller records about a node: when it first sees it (as the
	// Kubernetes node controller does, also after its own restart), and when its Ready
	// condition turns True or stops being True.
	EventRegisteredNode = "RegisteredNode"
	EventNodeReady      = "NodeReady"
	EventNodeNotReady   = "NodeNotReady"
)

// Config holds the controller-manager flags of node monitoring.
type Config struct {
	MonitorGracePeriod time.Duration // --node-monitor-grace-period
	StartupGracePeriod time.Duration // --node-startup-grace-period
	PodEvictionTimeout time.Duration // --pod-eviction-timeout
	DeletingPodsQPS    float64       // --deleting-pods-qps: nodes evicted per second
	DeletingPodsBurst  int           // --deleting-pods-burst
}

// DefaultConfig returns the Kubernetes 1.0 defaults.
func DefaultConfig() Config {
	return Config{
		MonitorGracePeriod: 40 * time.Second,
		StartupGracePeriod: 60 * time.Second,
		PodEvictionTimeout: 5 * time.Minute,
		DeletingPodsQPS:    0.1,
		DeletingPodsBurst:  10,
	}
}

// Observed is what the controller remembers of a node between decisions, on its own
// clock so that the clock of the node's agent does not matter: the heartbeat and
// transition times last read from the Ready condition, and when (locally) each last
// changed. The zero value is a node not seen yet (for example after a restart).
type Observed struct {
	Heartbeat    time.Time              `json:"heartbeat,omitzero"`
	Transition   time.Time              `json:"transition,omitzero"`
	Status       corev1.ConditionStatus `json:"status,omitempty"` // Ready status last decided
	ProbeAt      time.Time              `json:"probeAt,omitzero"`
	TransitionAt time.Time              `json:"transitionAt,omitzero"`
}

// Plan is what the controller does with one node at one time.
type Plan struct {
	// Status, when set, is the node's new status (its Ready condition marked Unknown),
	// to write through nodes/status.
	Status *corev1.NodeStatus `json:"status,omitempty"`
	// Hostname: the node lacks the hostname label, to add with the status.
	Hostname bool `json:"hostname,omitempty"`
	// Evict: the node has been not ready for the eviction timeout; its pods
	// (Victims) are to be evicted, at the pace of the one Evictor.
	Evict bool `json:"evict,omitempty"`
	// Events are the node events to record, in order (EventRegisteredNode,
	// EventNodeReady, EventNodeNotReady).
	Events []string `json:"events,omitempty"`
	// NextCheck is when to decide again if nothing happens before; zero when no timer
	// is needed (the node is Unknown and its eviction is due).
	NextCheck time.Time `json:"nextCheck,omitzero"`
	// Observed replaces the caller's.
	Observed Observed `json:"observed"`
}

// Decide looks at node at now; obs is what the controller remembered of it.
func Decide(node *corev1.Node, obs Observed, cfg Config, now time.Time) Plan {
	var plan Plan
	if _, ok := node.Labels[HostnameLabel]; !ok {
		plan.Hostname = true
	}

	cond := readyCondition(node.Status.Conditions)
	grace := cfg.MonitorGracePeriod
	if cond == nil {
		grace = cfg.StartupGracePeriod
	}
	if obs.ProbeAt.IsZero() {
		plan.Events = append(plan.Events, EventRegisteredNode)
	}
	obs = observe(obs, node, cond, now)
	status := corev1.ConditionUnknown
	if cond != nil {
		status = cond.Status
	}

	// Heartbeats stopped: Ready becomes Unknown.
	staleAt := obs.ProbeAt.Add(grace)
	if !now.Before(staleAt) && (cond == nil || cond.Status != corev1.ConditionUnknown) {
		st := node.Status.DeepCopy()
		at := metav1.NewTime(now).Rfc3339Copy()
		if cond == nil {
			st.Conditions = append(st.Conditions, corev1.NodeCondition{
				Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
				Reason: ReasonStatusNeverUpdated, Message: MessageStatusNeverUpdated,
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: at,
			})
		} else {
			c := readyCondition(st.Conditions)
			c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionUnknown, ReasonStatusUnknown, MessageStatusUnknown, at
		}
		plan.Status = st
		status = corev1.ConditionUnknown
		obs.Transition, obs.TransitionAt = at.Time, now
	}
	switch {
	case obs.Status == corev1.ConditionTrue && status != corev1.ConditionTrue:
		plan.Events = append(plan.Events, EventNodeNotReady)
	case obs.Status != corev1.ConditionTrue && status == corev1.ConditionTrue:
		plan.Events = append(plan.Events, EventNodeReady)
	}
	obs.Status = status
	plan.Observed = obs
	if plan.Status == nil && (cond == nil || cond.Status != corev1.ConditionUnknown) {
		plan.NextCheck = staleAt // heartbeats may stop
	}
	if status == corev1.ConditionTrue {
		return plan
	}

	// Not ready for long enough: evict the node's pods. As in Kubernetes 1.0, False
	// counts from the transition, Unknown from the last heartbeat less the grace period.
	var due time.Time
	if status == corev1.ConditionFalse {
		due = obs.TransitionAt.Add(cfg.PodEvictionTimeout)
	} else {
		due = obs.ProbeAt.Add(cfg.PodEvictionTimeout - grace)
	}
	if now.Before(due) {
		plan.NextCheck = earliest(plan.NextCheck, due)
		return plan
	}
	plan.Evict = true
	return plan
}

// observe records what changed in the Ready condition since the last look, on the
// controller's clock. A node that never posted is read as a condition whose times are
// the node's creation, so its grace period runs from creation.
func observe(obs Observed, node *corev1.Node, cond *corev1.NodeCondition, now time.Time) Observed {
	hb, tr := node.CreationTimestamp.Time, node.CreationTimestamp.Time
	if cond != nil {
		hb, tr = cond.LastHeartbeatTime.Time, cond.LastTransitionTime.Time
	}
	switch {
	case obs.ProbeAt.IsZero() && cond == nil:
		obs.ProbeAt, obs.TransitionAt = hb, tr
	case obs.ProbeAt.IsZero(): // first sight, say after a restart: a fresh grace period
		obs.ProbeAt, obs.TransitionAt = now, now
	default:
		if !hb.Equal(obs.Heartbeat) {
			obs.ProbeAt = now
		}
		if !tr.Equal(obs.Transition) {
			obs.TransitionAt = now
		}
	}
	obs.Heartbeat, obs.Transition = hb, tr
	return obs
}

func readyCondition(cs []corev1.NodeCondition) *corev1.NodeCondition {
	for i := range cs {
		if cs[i].Type == corev1.NodeReady {
			return &cs[i]
		}
	}
	return nil
}

// Victims returns the pods of an evicted node: those bound to it (pods of other nodes
// are ignored) that are not already terminating.
func Victims(node string, pods []*corev1.Pod) []types.NamespacedName {
	var out []types.NamespacedName
	for _, p := range pods {
		if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
			out = append(out, types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
	}
	return out
}

// earliest of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
