package podsync

import (
	"cmp"
	"slices"
	"time"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// Dead-container GC defaults (the kubelet's flags).
const (
	// MinGCAge is how long a container must have been dead before it is removed,
	// by default (the kubelet's --minimum-container-ttl-duration).
	MinGCAge = time.Minute
	// DefaultMaxPerContainer is --maximum-dead-containers-per-container.
	DefaultMaxPerContainer = 2
	// DefaultMaxDead is --maximum-dead-containers.
	DefaultMaxDead = 100
)

// gcUnit is the set of instances of one container of one pod.
type gcUnit struct{ uid, name string }

// DeadContainersToRemove chooses the dead containers to remove among all the agent's
// containers (those without a pod uid label are ignored). Only containers dead for
// minAge are removed. Every such container of a pod not in wantedPods goes; of
// the others, each (pod, container) keeps its perContainer newest dead instances
// (negative: no limit); then, while more than total (negative: no limit) removable
// ones remain, each unit is trimmed to max(1, total/units) and the oldest go. A
// running container, a wanted pod's latest sandbox and the latest instance of each
// container of a wanted pod are never removed. The ids are sorted.
func DeadContainersToRemove(all []runtime.Container, wantedPods map[string]bool, perContainer, total int, minAge time.Duration, now time.Time) []string {
	units := map[gcUnit][]runtime.Container{}
	for _, c := range all {
		uid := c.Labels[LabelPodUID]
		if uid == "" {
			continue
		}
		u := gcUnit{uid, ContainerNameOf(c)}
		units[u] = append(units[u], c)
	}
	keys := make([]gcUnit, 0, len(units))
	for u := range units {
		keys = append(keys, u)
	}
	slices.SortFunc(keys, func(a, b gcUnit) int {
		return cmp.Or(cmp.Compare(a.uid, b.uid), cmp.Compare(a.name, b.name))
	})

	var remove []string
	evictable := map[gcUnit][]runtime.Container{} // newest first, still kept
	for _, u := range keys {
		cs := units[u]
		slices.SortFunc(cs, newerFirst)
		wanted := wantedPods[u.uid]
		dead := 0
		for i, c := range cs {
			if c.Running() {
				continue
			}
			dead++
			if (wanted && i == 0) || now.Sub(deadSince(c)) < minAge {
				continue // protected, or too recent (still counts towards the limit)
			}
			if !wanted || (perContainer >= 0 && dead > perContainer) {
				remove = append(remove, c.ID)
				continue
			}
			evictable[u] = append(evictable[u], c)
		}
	}

	count := 0
	for _, cs := range evictable {
		count += len(cs)
	}
	if total >= 0 && count > total {
		per := max(1, total/len(evictable))
		var rest []runtime.Container
		for _, u := range keys {
			cs := evictable[u]
			if len(cs) > per {
				for _, c := range cs[per:] {
					remove = append(remove, c.ID)
				}
				count -= len(cs) - per
				cs = cs[:per]
			}
			rest = append(rest, cs...)
		}
		slices.SortFunc(rest, func(a, b runtime.Container) int { return newerFirst(b, a) })
		for i := 0; count > total && i < len(rest); i++ {
			remove = append(remove, rest[i].ID)
			count--
		}
	}
	slices.Sort(remove)
	return remove
}

// deadSince is when c died (or was created, if it never ran).
func deadSince(c runtime.Container) time.Time {
	if !c.FinishedAt.IsZero() {
		return c.FinishedAt
	}
	return c.CreatedAt
}
