package sim

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeVersion is the containerRuntimeVersion simulated nodes report; image and
// container IDs use the same scheme.
const RuntimeVersion = "sim://1"

// Action is what a simulated node does with one of its pods.
type Action int

const (
	// Leave the pod as it is: it runs, or has ended.
	Leave Action = iota
	// Start the pod: give it an IP and report it Running.
	Start
	// Remove the pod: it is being deleted, and its (simulated) containers are stopped.
	Remove
)

func (a Action) String() string {
	switch a {
	case Start:
		return "start"
	case Remove:
		return "remove"
	default:
		return "leave"
	}
}

// Decide says what to do with pod, bound to one of our nodes.
func Decide(pod *corev1.Pod) Action {
	switch {
	case pod.DeletionTimestamp != nil:
		return Remove
	case pod.Status.Phase == "" || pod.Status.Phase == corev1.PodPending:
		return Start
	default:
		return Leave
	}
}

// RunningStatus is the status of pod once its containers run on a node at hostIP
// with podIP: phase Running, every condition True, each container running and ready
// since now, init containers completed. Fields the server set (QoS class) and an
// earlier start time are kept.
func RunningStatus(pod *corev1.Pod, hostIP, podIP string, now time.Time) corev1.PodStatus {
	at := metav1.NewTime(now).Rfc3339Copy()
	st := pod.Status.DeepCopy()
	st.Phase = corev1.PodRunning
	st.Reason, st.Message = "", ""
	st.HostIP = hostIP
	st.HostIPs = []corev1.HostIP{{IP: hostIP}}
	st.PodIP = podIP
	st.PodIPs = []corev1.PodIP{{IP: podIP}}
	if st.StartTime == nil {
		st.StartTime = &at
	}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = setCondition(st.Conditions, t, at)
	}
	st.InitContainerStatuses = make([]corev1.ContainerStatus, 0, len(pod.Spec.InitContainers))
	for _, c := range pod.Spec.InitContainers {
		cs := containerStatus(pod, c)
		cs.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: at, FinishedAt: at, ContainerID: cs.ContainerID,
		}
		cs.Ready = true
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	if len(st.InitContainerStatuses) == 0 {
		st.InitContainerStatuses = nil
	}
	st.ContainerStatuses = make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		cs := containerStatus(pod, c)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: at}
		cs.Ready = true
		started := true
		cs.Started = &started
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return *st
}

// RejectedStatus is the status of a pod the node cannot run, as the Kubernetes 1.0
// kubelet reports it: phase Failed with a reason and a message.
func RejectedStatus(pod *corev1.Pod, reason, message string, now time.Time) corev1.PodStatus {
	st := pod.Status.DeepCopy()
	st.Phase = corev1.PodFailed
	st.Reason, st.Message = reason, message
	if st.StartTime == nil {
		at := metav1.NewTime(now).Rfc3339Copy()
		st.StartTime = &at
	}
	return *st
}

// ContainerID is the simulated runtime's id of container name in pod.
func ContainerID(pod *corev1.Pod, name string) string {
	return "sim://" + string(pod.UID) + "-" + name
}

func containerStatus(pod *corev1.Pod, c corev1.Container) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:        c.Name,
		Image:       c.Image,
		ImageID:     "sim://" + c.Image,
		ContainerID: ContainerID(pod, c.Name),
	}
}

// setCondition sets condition t True, keeping its transition time if it was True.
func setCondition(conds []corev1.PodCondition, t corev1.PodConditionType, at metav1.Time) []corev1.PodCondition {
	for i := range conds {
		if conds[i].Type != t {
			continue
		}
		if conds[i].Status != corev1.ConditionTrue {
			conds[i].Status, conds[i].LastTransitionTime = corev1.ConditionTrue, at
		}
		conds[i].Reason, conds[i].Message = "", ""
		return conds
	}
	return append(conds, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at})
}
