package podsync

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// Why a container is started (Start.Reason).
const (
	StartFirst          = "FirstStart"     // never ran
	StartRestart        = "Restart"        // exited, and the restart policy restarts it
	StartSpecChanged    = "SpecChanged"    // its spec hash changed
	StartUnhealthy      = "Unhealthy"      // its liveness probe failed
	StartSandboxChanged = "SandboxChanged" // it ran in a sandbox being recreated
)

// Why a running container is stopped (Kill.Reason).
const (
	KillSpecChanged = "SpecChanged" // its spec hash changed
	KillUnhealthy   = "Unhealthy"   // its liveness probe failed
	KillNotInSpec   = "NotInSpec"   // the pod spec has no container of its name
	KillDuplicate   = "Duplicate"   // a newer instance of the same container exists
)

// ReasonCrashLoopBackOff is the waiting reason of a container held back by its
// crash back-off.
const ReasonCrashLoopBackOff = "CrashLoopBackOff"

// Plan is what one sync must do, in field order: KillPod, CreateSandbox, Kill,
// Start. When KillPod is set Kill is empty (every container is stopped anyway).
type Plan struct {
	// KillPod stops every running container of the pod, the infra container
	// included (a no-op when none runs): the sandbox is dead or changed, the pod is
	// being deleted, or it has finished.
	KillPod bool `json:"killPod,omitempty"`
	// CreateSandbox creates and starts a new infra container (after KillPod).
	CreateSandbox bool `json:"createSandbox,omitempty"`
	// Kill are running containers to stop, the sandbox staying up.
	Kill []Kill `json:"kill,omitempty"`
	// Start are the spec containers to create and start, in spec order.
	Start []Start `json:"start,omitempty"`
	// Waiting are containers held back and why (CrashLoopBackOff); the agent
	// passes them on to ComputeStatus.
	Waiting map[string]corev1.ContainerStateWaiting `json:"waiting,omitempty"`
	// RequeueAfter is when the next sync is needed (a back-off expiring); 0 for
	// none.
	RequeueAfter time.Duration `json:"requeueAfter,omitempty"`
	// Backoff is the updated back-off state, for the next ComputePlan.
	Backoff Backoff `json:"backoff,omitempty"`
}

// Kill is one running container to stop.
type Kill struct {
	ID      string `json:"id"`
	Name    string `json:"name"` // pod-level container name ("POD" for the infra container)
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Start is one spec container to create and start.
type Start struct {
	Index        int    `json:"index"` // into pod.Spec.Containers
	Name         string `json:"name"`
	RestartCount int    `json:"restartCount"` // for the new container's label
	Reason       string `json:"reason"`
}

// ComputePlan decides one sync of pod given what the engine holds for it.
// livenessFailed names the containers whose liveness probe has failed; backoff is
// the state the previous plan returned; now is the current time.
//
// A pod being deleted, or already Succeeded or Failed, only has its containers
// stopped. A dead, missing or changed sandbox means: stop everything, create a new
// sandbox, and start every container the restart policy allows (a first start is
// always allowed; a container that was running is restarted unless the policy is
// Never). With a healthy sandbox, a running container whose spec hash changed is
// killed and restarted; one whose liveness probe failed is killed and restarted
// unless the policy is Never; an exited one is restarted under Always, or under
// OnFailure after a failure. Restarts after an exit or a liveness failure honour the
// crash back-off. A pod left with nothing running, starting or waiting has
// finished: its sandbox is stopped too.
func ComputePlan(pod *corev1.Pod, obs Observed, livenessFailed map[string]bool, backoff Backoff, now time.Time) Plan {
	keys := map[string]bool{}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		keys[BackoffKey(c.Name, HashContainer(c))] = true
	}
	p := Plan{Backoff: backoff.clone(keys)}
	defer func() {
		if len(p.Backoff) == 0 {
			p.Backoff = nil
		}
	}()
	if pod.DeletionTimestamp != nil || podpkg.Terminal(pod) {
		p.KillPod = true
		return p
	}
	sandbox, ok := obs.Sandbox()
	fresh := !ok || !sandbox.Running() || HashOf(sandbox) != SandboxHash(pod)
	policy := pod.Spec.RestartPolicy
	kept := 0 // app containers left running
	wanted := map[string]bool{}
	if ok {
		wanted[sandbox.ID] = true
	}

	hold := func(name, key string, started, finished time.Time) bool {
		d, until, held := p.Backoff.Hold(key, started, finished, now)
		if !held {
			p.Backoff.Next(key, started, finished)
			return false
		}
		if p.Waiting == nil {
			p.Waiting = map[string]corev1.ContainerStateWaiting{}
		}
		p.Waiting[name] = corev1.ContainerStateWaiting{
			Reason: ReasonCrashLoopBackOff,
			Message: fmt.Sprintf("Back-off %s restarting failed container=%s pod=%s(%s)",
				d, name, FullName(pod), pod.UID),
		}
		if wait := until.Sub(now); p.RequeueAfter == 0 || wait < p.RequeueAfter {
			p.RequeueAfter = wait
		}
		return true
	}

	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		hash := HashContainer(c)
		key := BackoffKey(c.Name, hash)
		latest, has := obs.Latest(c.Name)
		if has {
			wanted[latest.ID] = true
		}
		next := obs.RestartCount(c.Name) + 1
		start := func(reason string, count int) {
			p.Start = append(p.Start, Start{Index: i, Name: c.Name, RestartCount: count, Reason: reason})
		}
		switch {
		case !has:
			start(StartFirst, 0)
		case latest.Running() && fresh:
			if policy != corev1.RestartPolicyNever {
				start(StartSandboxChanged, next)
			}
		case latest.Running() && HashOf(latest) != hash:
			p.Kill = append(p.Kill, Kill{ID: latest.ID, Name: c.Name, Reason: KillSpecChanged,
				Message: fmt.Sprintf("Container %s definition changed, will be restarted", c.Name)})
			start(StartSpecChanged, next)
		case latest.Running() && livenessFailed[c.Name]:
			msg := fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.Name)
			if policy == corev1.RestartPolicyNever {
				msg = fmt.Sprintf("Container %s failed liveness probe", c.Name)
			}
			p.Kill = append(p.Kill, Kill{ID: latest.ID, Name: c.Name, Reason: KillUnhealthy, Message: msg})
			if policy != corev1.RestartPolicyNever && !hold(c.Name, key, latest.StartedAt, now) {
				start(StartUnhealthy, next)
			}
		case latest.Running():
			kept++
		case restartAllowed(policy, latest):
			if started, finished := exitTimes(latest, now); !hold(c.Name, key, started, finished) {
				start(StartRestart, next)
			}
		}
	}

	if len(p.Start) == 0 && len(p.Waiting) == 0 && kept == 0 {
		p.KillPod, p.Kill = true, nil
		return p
	}
	if fresh {
		p.KillPod, p.CreateSandbox, p.Kill = true, true, nil
		return p
	}
	// Anything else running is not wanted: containers gone from the spec, older
	// instances, older sandboxes.
	for _, c := range obs.Containers {
		if !c.Running() || wanted[c.ID] {
			continue
		}
		name := ContainerNameOf(c)
		k := Kill{ID: c.ID, Name: name, Reason: KillDuplicate,
			Message: fmt.Sprintf("Container %s has a newer instance", name)}
		if name != InfraName && !inSpec(pod, name) {
			k.Reason, k.Message = KillNotInSpec, fmt.Sprintf("Container %s is not in the pod spec", name)
		}
		p.Kill = append(p.Kill, k)
	}
	return p
}

// failed tells whether a dead container ended in failure: a non-zero exit, an OOM
// kill, or a start that never happened.
func failed(c runtime.Container) bool {
	return c.ExitCode != 0 || c.OOMKilled || c.Error != "" || c.StartedAt.IsZero()
}

// restartAllowed tells whether policy restarts the dead container c.
func restartAllowed(policy corev1.RestartPolicy, c runtime.Container) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return failed(c)
	default: // Always, and the API default when unset
		return true
	}
}

func inSpec(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}
