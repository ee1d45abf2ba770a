package podsync

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// IDPrefix starts container and image ids in statuses ("docker://<id>").
const IDPrefix = "docker://"

// Waiting reasons ComputeStatus gives on its own.
const (
	ReasonContainerCreating = "ContainerCreating"
	ReasonRunContainerError = "RunContainerError"
)

// Terminated reasons.
const (
	ReasonCompleted          = "Completed"
	ReasonError              = "Error"
	ReasonOOMKilled          = "OOMKilled"
	ReasonContainerCannotRun = "ContainerCannotRun"
)

// Condition reasons.
const (
	ReasonContainersNotReady = "ContainersNotReady"
	ReasonPodCompleted       = "PodCompleted"
)

// StatusInput is what the agent knows beyond the engine state.
type StatusInput struct {
	HostIP string
	// Ready are readiness probe results by container name; a running container
	// missing here is ready iff it has no readiness probe.
	Ready map[string]bool
	// Waiting are reasons from the agent (image pull and config errors) and from
	// the plan (CrashLoopBackOff); they apply to containers not running.
	Waiting map[string]corev1.ContainerStateWaiting
	// Message and Reason are pod-level, e.g. a missing secret.
	Message, Reason string
}

// ComputeStatus is the pod status the engine state implies: phase, conditions,
// addresses, start time and one container status per spec container, in spec
// order. Times are whole seconds (as the API stores them), so an unchanged state
// gives an equal status. A pod that has Succeeded or Failed keeps its phase.
func ComputeStatus(pod *corev1.Pod, obs Observed, in StatusInput, now time.Time) corev1.PodStatus {
	at := stamp(now)
	old := &pod.Status
	st := corev1.PodStatus{
		Reason:   in.Reason,
		Message:  in.Message,
		QOSClass: old.QOSClass,
		HostIP:   in.HostIP,
	}
	if in.HostIP != "" {
		st.HostIPs = []corev1.HostIP{{IP: in.HostIP}}
	}
	if old.StartTime != nil {
		st.StartTime = old.StartTime.DeepCopy()
	} else {
		st.StartTime = &at
	}

	for i := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(pod, &pod.Spec.Containers[i], obs, in))
	}

	st.Phase = phase(pod, st.ContainerStatuses)
	if podpkg.Terminal(pod) {
		st.Phase = old.Phase
	}

	switch sb, ok := obs.Sandbox(); {
	case pod.Spec.HostNetwork:
		st.PodIP = in.HostIP
	case ok && sb.Running() && sb.IP != "":
		st.PodIP = sb.IP
	case terminal(st):
		st.PodIP = old.PodIP // a finished pod keeps the address it had
	}
	if st.PodIP != "" {
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}

	st.Conditions = conditions(pod, st, at)
	return st
}

// terminal tells whether a pod with status st has ended for good (actors/pod's rule).
func terminal(st corev1.PodStatus) bool {
	return podpkg.Terminal(&corev1.Pod{Status: st})
}

// stamp is t as the API stores it, in whole seconds.
func stamp(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }

// containerStatus is the status of spec container c.
func containerStatus(pod *corev1.Pod, c *corev1.Container, obs Observed, in StatusInput) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
	started := false
	cs.Started = &started
	latest, ok := obs.Latest(c.Name)
	if !ok {
		if prev := oldStatus(pod, c.Name); prev != nil && prev.State.Terminated != nil {
			// The engine no longer holds it: keep what was last seen.
			cs = *prev.DeepCopy()
			cs.Image, cs.Ready, cs.Started = c.Image, false, &started
			return cs
		}
		cs.State.Waiting = waiting(in, c.Name, corev1.ContainerStateWaiting{Reason: ReasonContainerCreating})
		return cs
	}
	cs.RestartCount = int32(obs.RestartCount(c.Name))
	if prev, ok := obs.Previous(c.Name); ok && !prev.Running() {
		cs.LastTerminationState.Terminated = terminated(prev)
	}
	cs.ContainerID, cs.ImageID = IDPrefix+latest.ID, imageID(latest)
	switch {
	case latest.Running():
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: stamp(latest.StartedAt)}
		started = true
		ready, probed := in.Ready[c.Name]
		cs.Ready = ready || (!probed && c.ReadinessProbe == nil)
	case latest.StartedAt.IsZero() && latest.FinishedAt.IsZero() && latest.State != runtime.StateExited:
		// Created but not started (yet): the start is in progress or failed.
		def := corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}
		if latest.Error != "" {
			def = corev1.ContainerStateWaiting{Reason: ReasonRunContainerError, Message: latest.Error}
		}
		cs.State.Waiting = waiting(in, c.Name, def)
	default:
		t := terminated(latest)
		if w, ok := in.Waiting[c.Name]; ok {
			// Held back (back-off, pull error): waiting, with this run as the last.
			cs.State.Waiting = &w
			cs.LastTerminationState.Terminated = t
		} else {
			cs.State.Terminated = t
		}
	}
	return cs
}

// waiting is the agent's waiting reason for name, else def.
func waiting(in StatusInput, name string, def corev1.ContainerStateWaiting) *corev1.ContainerStateWaiting {
	if w, ok := in.Waiting[name]; ok {
		return &w
	}
	return &def
}

func imageID(c runtime.Container) string {
	if c.ImageID == "" {
		return ""
	}
	return IDPrefix + c.ImageID
}

// terminated is the termination state of dead container c.
func terminated(c runtime.Container) *corev1.ContainerStateTerminated {
	t := &corev1.ContainerStateTerminated{
		ExitCode:    int32(c.ExitCode),
		StartedAt:   stamp(c.StartedAt),
		FinishedAt:  stamp(c.FinishedAt),
		ContainerID: IDPrefix + c.ID,
	}
	switch {
	case c.OOMKilled:
		t.Reason = ReasonOOMKilled
	case c.Error != "":
		t.Reason, t.Message = ReasonContainerCannotRun, c.Error
	case c.ExitCode == 0:
		t.Reason = ReasonCompleted
	default:
		t.Reason = ReasonError
	}
	if c.StartedAt.IsZero() {
		t.StartedAt = metav1.Time{}
	}
	if c.FinishedAt.IsZero() {
		t.FinishedAt = metav1.Time{}
	}
	return t
}

func oldStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// phase is the pod phase the container statuses imply (the kubelet's rules).
func phase(pod *corev1.Pod, statuses []corev1.ContainerStatus) corev1.PodPhase {
	var waiting, running, stopped, succeeded int
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.LastTerminationState.Terminated != nil:
			stopped++ // waiting to restart
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0 || len(statuses) == 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
		if stopped == succeeded {
			return corev1.PodSucceeded
		}
		return corev1.PodFailed
	case pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && stopped == succeeded:
		return corev1.PodSucceeded
	default:
		return corev1.PodRunning // restarting
	}
}

// conditions are the pod's conditions in the order the kubelet reports them,
// keeping each transition time while the status stays the same, then any other
// conditions the pod had (set by others).
func conditions(pod *corev1.Pod, st corev1.PodStatus, at metav1.Time) []corev1.PodCondition {
	var unready []string
	for _, cs := range st.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	ready := corev1.PodCondition{Status: corev1.ConditionTrue}
	switch {
	case terminal(st):
		ready = corev1.PodCondition{Status: corev1.ConditionFalse, Reason: ReasonPodCompleted}
	case len(unready) > 0:
		ready = corev1.PodCondition{Status: corev1.ConditionFalse, Reason: ReasonContainersNotReady,
			Message: fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))}
	}
	initialized := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	podReady, containersReady := ready, ready
	podReady.Type, containersReady.Type = corev1.PodReady, corev1.ContainersReady
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}

	out := []corev1.PodCondition{initialized, podReady, containersReady, scheduled}
	mine := map[corev1.PodConditionType]bool{}
	for i := range out {
		mine[out[i].Type] = true
		out[i].LastTransitionTime = at
		for _, o := range pod.Status.Conditions {
			if o.Type == out[i].Type && o.Status == out[i].Status && !o.LastTransitionTime.IsZero() {
				out[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	for _, o := range pod.Status.Conditions {
		if !mine[o.Type] {
			out = append(out, o)
		}
	}
	return out
}
