package nodestatus

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostnameLabel is the label every registered node carries, set to its name.
const HostnameLabel = "kubernetes.io/hostname"

// The Ready condition a healthy agent posts, as the Kubernetes 1.0 kubelet words it.
const (
	ReasonReady  = "KubeletReady"
	MessageReady = "kubelet is posting ready status"
)

// Info is what an agent knows about its node: the values it registers and reports.
type Info struct {
	Name       string
	InternalIP string
	Hostname   string
	PodCIDR    string              // asked for at registration; "" leaves it to the server
	Capacity   corev1.ResourceList // cpu, memory, pods
	System     corev1.NodeSystemInfo
	DaemonPort int32 // port of the agent's server (logs, exec, stats); 0 for none
}

// Registration is the Node an agent creates for itself: labelled with its hostname,
// with its pod CIDR (if any) and an initial Ready status.
func Registration(info Info, now time.Time) *corev1.Node {
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   info.Name,
			Labels: map[string]string{HostnameLabel: info.Name},
		},
	}
	if info.PodCIDR != "" {
		n.Spec.PodCIDR = info.PodCIDR
		n.Spec.PodCIDRs = []string{info.PodCIDR}
	}
	n.Status = Status(corev1.NodeStatus{}, info, now)
	return n
}

// Status is the status to post at now, given the status the server holds (prev).
// The Ready condition is True with a fresh heartbeat; its transition time is kept
// while it was already True. Conditions other than Ready are kept as they are.
// Times are cut to whole seconds, as the wire carries them.
func Status(prev corev1.NodeStatus, info Info, now time.Time) corev1.NodeStatus {
	at := metav1.NewTime(now).Rfc3339Copy()
	ready := corev1.NodeCondition{
		Type:               corev1.NodeReady,
		Status:             corev1.ConditionTrue,
		Reason:             ReasonReady,
		Message:            MessageReady,
		LastHeartbeatTime:  at,
		LastTransitionTime: at,
	}
	conds := make([]corev1.NodeCondition, 0, len(prev.Conditions)+1)
	for _, c := range prev.Conditions {
		if c.Type != corev1.NodeReady {
			conds = append(conds, c)
			continue
		}
		if c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			ready.LastTransitionTime = c.LastTransitionTime
		}
	}
	conds = append(conds, ready)

	addrs := make([]corev1.NodeAddress, 0, 2)
	if info.InternalIP != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: info.InternalIP})
	}
	if info.Hostname != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: info.Hostname})
	}
	return corev1.NodeStatus{
		Phase:       corev1.NodeRunning,
		Capacity:    info.Capacity.DeepCopy(),
		Allocatable: info.Capacity.DeepCopy(),
		Conditions:  conds,
		Addresses:   addrs,
		NodeInfo:    info.System,
		Images:      prev.Images,
		DaemonEndpoints: corev1.NodeDaemonEndpoints{
			KubeletEndpoint: corev1.DaemonEndpoint{Port: info.DaemonPort},
		},
	}
}
