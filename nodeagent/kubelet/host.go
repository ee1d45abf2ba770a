package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// Host is the agent as its HTTP server sees it.
type Host struct{ a *Agent }

// Host returns the agent's view for its HTTP server.
func (a *Agent) Host() Host { return Host{a} }

// Pods lists the pods the agent runs.
func (h Host) Pods() []*corev1.Pod { return h.a.pods() }

// find is the worker of the pod namespace/name.
func (a *Agent) find(namespace, name string) (*worker, *corev1.Pod, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.workers {
		if p := w.latest.Load(); p != nil && p.Namespace == namespace && p.Name == name && !w.gone.Load() {
			return w, p, true
		}
	}
	return nil, nil, false
}

// observe is what the engine has of a pod this agent runs.
func (h Host) observe(namespace, pod string) (podsync.Observed, error) {
	_, p, ok := h.a.find(namespace, pod)
	if !ok {
		return podsync.Observed{}, runtime.NotFound(fmt.Sprintf("pod %s/%s", namespace, pod))
	}
	return h.a.observe(context.Background(), p.UID)
}

// ContainerID resolves a container of a pod to its engine id: the latest instance,
// or with previous the one before it.
func (h Host) ContainerID(namespace, pod, container string, previous bool) (string, error) {
	obs, err := h.observe(namespace, pod)
	if err != nil {
		return "", err
	}
	var (
		c     runtime.Container
		found bool
	)
	if previous {
		c, found = obs.Previous(container)
	} else {
		c, found = obs.Latest(container)
	}
	if !found {
		what := "container"
		if previous {
			what = "previous terminated container"
		}
		return "", runtime.NotFound(fmt.Sprintf("%s %q in pod %q", what, container, pod))
	}
	return c.ID, nil
}

// PodIP is the IP of a pod's infra container.
func (h Host) PodIP(namespace, pod string) (string, error) {
	obs, err := h.observe(namespace, pod)
	if err != nil {
		return "", err
	}
	sb, ok := obs.Sandbox()
	if !ok || !sb.Running() || sb.IP == "" {
		return "", fmt.Errorf("pod %s/%s has no running infra container", namespace, pod)
	}
	return sb.IP, nil
}
