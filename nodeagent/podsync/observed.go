package podsync

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// Observed is what the engine holds for one pod: every container carrying its uid
// label, in any state and of any age.
type Observed struct{ Containers []runtime.Container }

// ContainerNameOf is the pod-level container name of c ("POD" for the infra
// container): its label, else the name it was created under.
func ContainerNameOf(c runtime.Container) string {
	if n, ok := c.Labels[LabelContainer]; ok {
		return n
	}
	if n, ok := ParseContainerName(c.Name); ok {
		return n.Container
	}
	return ""
}

// HashOf is the spec hash c was created from: its label, else its name's.
func HashOf(c runtime.Container) string {
	if h, ok := c.Labels[LabelHash]; ok {
		return h
	}
	if n, ok := ParseContainerName(c.Name); ok {
		return n.Hash
	}
	return ""
}

// restartCountOf is the restart count c was created with (0 if unlabelled).
func restartCountOf(c runtime.Container) (int, bool) {
	n, err := strconv.Atoi(c.Labels[LabelRestartCount])
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// newerFirst orders containers newest first: creation, then start time, then id.
func newerFirst(a, b runtime.Container) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// Instances are the containers named name (any state), newest first.
func (o Observed) Instances(name string) []runtime.Container {
	var out []runtime.Container
	for _, c := range o.Containers {
		if ContainerNameOf(c) == name {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, newerFirst)
	return out
}

// Sandbox is the newest infra container.
func (o Observed) Sandbox() (runtime.Container, bool) {
	return o.Latest(InfraName)
}

// Latest is the newest container named name.
func (o Observed) Latest(name string) (runtime.Container, bool) {
	if in := o.Instances(name); len(in) > 0 {
		return in[0], true
	}
	return runtime.Container{}, false
}

// Previous is the container named name before the latest (for `logs --previous`
// and the status's lastState).
func (o Observed) Previous(name string) (runtime.Container, bool) {
	if in := o.Instances(name); len(in) > 1 {
		return in[1], true
	}
	return runtime.Container{}, false
}

// RestartCount is how often container name has been restarted: the count the
// latest instance was created with, else the number of earlier instances.
func (o Observed) RestartCount(name string) int {
	in := o.Instances(name)
	if len(in) == 0 {
		return 0
	}
	if n, ok := restartCountOf(in[0]); ok {
		return n
	}
	return len(in) - 1
}

// InspectionCurrent tells whether an earlier inspection of a container still
// describes it, now that the engine's list shows it in state listed: the agent then
// need not ask the engine again. An exited container does not change any more. A
// running one changes only by exiting, which the list shows, or by being started
// again by someone else (docker start after a stop), after which the agent forgets
// the inspection on the engine's start event. A created one is about to start.
func InspectionCurrent(listed runtime.State, inspected runtime.Container) bool {
	switch inspected.State {
	case runtime.StateExited, runtime.StateRunning:
		return listed == inspected.State
	default:
		return false
	}
}
