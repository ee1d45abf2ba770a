package docker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/network"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// fromDockerState maps Docker's state names. A paused or restarting container
// still has its process, so it counts as running.
func fromDockerState(s container.ContainerState) runtime.State {
	switch s {
	case container.StateCreated:
		return runtime.StateCreated
	case container.StateRunning, container.StatePaused, container.StateRestarting:
		return runtime.StateRunning
	case container.StateExited, container.StateDead:
		return runtime.StateExited
	default:
		return runtime.StateUnknown
	}
}

// fromSummary maps one entry of Docker's container list. The list carries no exit
// details; InspectContainer has them.
func fromSummary(s container.Summary) runtime.Container {
	c := runtime.Container{
		ID:      s.ID,
		Image:   s.Image,
		ImageID: s.ImageID,
		Labels:  s.Labels,
		State:   fromDockerState(s.State),
	}
	if len(s.Names) > 0 {
		c.Name = strings.TrimPrefix(s.Names[0], "/")
	}
	if s.Created > 0 {
		c.CreatedAt = time.Unix(s.Created, 0).UTC()
	}
	if s.NetworkSettings != nil {
		c.IP = bridgeIP(s.NetworkSettings.Networks)
	}
	return c
}

// fromInspect maps Docker's inspect answer.
func fromInspect(r container.InspectResponse) runtime.Container {
	var c runtime.Container
	if r.ContainerJSONBase != nil {
		b := r.ContainerJSONBase
		c.ID = b.ID
		c.Name = strings.TrimPrefix(b.Name, "/")
		c.ImageID = b.Image
		c.CreatedAt = parseDockerTime(b.Created)
		if s := b.State; s != nil {
			c.State = fromDockerState(s.Status)
			if s.Running {
				c.State = runtime.StateRunning
			}
			c.StartedAt = parseDockerTime(s.StartedAt)
			c.FinishedAt = parseDockerTime(s.FinishedAt)
			c.ExitCode = s.ExitCode
			c.OOMKilled = s.OOMKilled
			c.Error = s.Error
			c.PID = s.Pid
		} else {
			c.State = runtime.StateUnknown
		}
	}
	if r.Config != nil {
		c.Image = r.Config.Image
		c.Labels = r.Config.Labels
	}
	if r.NetworkSettings != nil {
		c.IP = bridgeIP(r.NetworkSettings.Networks)
	}
	return c
}

// bridgeIP is the address on Docker's default bridge, else on the first network
// (by name) that has one, else "" (e.g. a container sharing another's network).
func bridgeIP(networks map[string]*network.EndpointSettings) string {
	if n := networks["bridge"]; n != nil && n.IPAddress != "" {
		return n.IPAddress
	}
	names := make([]string, 0, len(networks))
	for name := range networks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := networks[name]; n != nil && n.IPAddress != "" {
			return n.IPAddress
		}
	}
	return ""
}

// parseDockerTime reads Docker's RFC 3339 timestamps; Docker's "never"
// (0001-01-01T00:00:00Z) and garbage are the zero time.
func parseDockerTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// fromStats maps one stats sample.
func fromStats(s container.StatsResponse) runtime.Stats {
	out := runtime.Stats{
		Time:             s.Read,
		CPUUsageNanos:    s.CPUStats.CPUUsage.TotalUsage,
		MemoryUsageBytes: s.MemoryStats.Usage,
		MemoryLimitBytes: s.MemoryStats.Limit,
	}
	// The working set leaves out the inactive page cache: cgroup v2 names it
	// inactive_file, v1 total_inactive_file.
	inactive, ok := s.MemoryStats.Stats["inactive_file"]
	if !ok {
		inactive = s.MemoryStats.Stats["total_inactive_file"]
	}
	out.MemoryWorkingSetBytes = out.MemoryUsageBytes - min(inactive, out.MemoryUsageBytes)
	for _, n := range s.Networks {
		out.RxBytes += n.RxBytes
		out.TxBytes += n.TxBytes
	}
	return out
}

// fromEvent maps a container event. Docker appends details to some actions
// ("exec_start: sh -c ..."); Action keeps the verb only. Labels are the actor's
// attributes: the container's labels plus Docker's own keys ("name", "image",
// "exitCode" on die, "signal" on kill).
func fromEvent(m events.Message) runtime.Event {
	action, _, _ := strings.Cut(string(m.Action), ":")
	return runtime.Event{
		ContainerID: m.Actor.ID,
		Action:      action,
		Labels:      m.Actor.Attributes,
	}
}

// dockerSince renders a Since time in the "seconds.nanoseconds" form Docker
// accepts; "" for the beginning.
func dockerSince(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond())
}

// dockerTail renders a Tail count: negative is every line.
func dockerTail(n int64) string {
	if n < 0 {
		return "all"
	}
	return strconv.FormatInt(n, 10)
}
