package stats

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Sample is one reading of a cumulative CPU counter and of memory, at Time.
type Sample struct {
	Time                  time.Time
	CPUUsageNanos         uint64 // cumulative CPU time
	MemoryUsageBytes      uint64
	MemoryWorkingSetBytes uint64
	MemoryAvailableBytes  uint64 // node only; 0 for containers
}

// History is the last two samples of one container or of the node; Prev is zero
// until a second sample was taken.
type History struct {
	Prev, Last Sample
}

// Add makes s the last sample, the last one the previous.
func (h History) Add(s Sample) History { return History{Prev: h.Last, Last: s} }

// NanoCores is the CPU rate between the two samples, in billionths of a core; ok is
// false with fewer than two samples, or when the counter went back (a restarted
// container).
func (h History) NanoCores() (uint64, bool) {
	if h.Prev.Time.IsZero() || !h.Last.Time.After(h.Prev.Time) || h.Last.CPUUsageNanos < h.Prev.CPUUsageNanos {
		return 0, false
	}
	d := h.Last.Time.Sub(h.Prev.Time)
	used := h.Last.CPUUsageNanos - h.Prev.CPUUsageNanos
	return uint64(float64(used) / d.Seconds()), true
}

// Container is what the Summary shows of one container.
type Container struct {
	Name      string
	StartTime time.Time
	History   History
}

// Pod is what the Summary shows of one pod.
type Pod struct {
	Namespace, Name, UID string
	StartTime            time.Time
	Containers           []Container
}

// Node is the node's identity and its samples.
type Node struct {
	Name      string
	StartTime time.Time // when the agent (the node) started
	History   History
}

// Build is the Summary of a node and its pods. A container's cpu has
// usageCoreNanoSeconds from its last sample and usageNanoCores once it has two; a
// pod's cpu and memory are the sums of its containers'.
func Build(node Node, pods []Pod) statsapi.Summary {
	out := statsapi.Summary{
		Node: statsapi.NodeStats{
			NodeName:  node.Name,
			StartTime: metav1.NewTime(node.StartTime),
		},
		Pods: make([]statsapi.PodStats, 0, len(pods)),
	}
	if !node.History.Last.Time.IsZero() {
		out.Node.CPU = cpuStats(node.History)
		out.Node.Memory = memoryStats(node.History.Last)
	}
	for _, p := range pods {
		ps := statsapi.PodStats{
			PodRef:     statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			StartTime:  metav1.NewTime(p.StartTime),
			Containers: make([]statsapi.ContainerStats, 0, len(p.Containers)),
		}
		var last Sample
		var nanoCores uint64
		rates := true
		for _, c := range p.Containers {
			if c.History.Last.Time.IsZero() {
				continue
			}
			ps.Containers = append(ps.Containers, statsapi.ContainerStats{
				Name:      c.Name,
				StartTime: metav1.NewTime(c.StartTime),
				CPU:       cpuStats(c.History),
				Memory:    memoryStats(c.History.Last),
			})
			nc, ok := c.History.NanoCores()
			rates = rates && ok
			nanoCores += nc
			last = addSample(last, c.History.Last)
		}
		if len(ps.Containers) > 0 {
			ps.CPU = cpuStats(History{Last: last})
			if rates {
				ps.CPU.UsageNanoCores = &nanoCores
			}
			ps.Memory = memoryStats(last)
		}
		out.Pods = append(out.Pods, ps)
	}
	return out
}

// addSample sums two containers' samples, at the later of their times.
func addSample(x, y Sample) Sample {
	t := x.Time
	if y.Time.After(t) {
		t = y.Time
	}
	return Sample{Time: t, CPUUsageNanos: x.CPUUsageNanos + y.CPUUsageNanos,
		MemoryUsageBytes: x.MemoryUsageBytes + y.MemoryUsageBytes, MemoryWorkingSetBytes: x.MemoryWorkingSetBytes + y.MemoryWorkingSetBytes}
}

func cpuStats(h History) *statsapi.CPUStats {
	total := h.Last.CPUUsageNanos
	cs := &statsapi.CPUStats{Time: metav1.NewTime(h.Last.Time), UsageCoreNanoSeconds: &total}
	if nc, ok := h.NanoCores(); ok {
		cs.UsageNanoCores = &nc
	}
	return cs
}

func memoryStats(s Sample) *statsapi.MemoryStats {
	usage, ws := s.MemoryUsageBytes, s.MemoryWorkingSetBytes
	ms := &statsapi.MemoryStats{Time: metav1.NewTime(s.Time), UsageBytes: &usage, WorkingSetBytes: &ws}
	if s.MemoryAvailableBytes > 0 {
		avail := s.MemoryAvailableBytes
		ms.AvailableBytes = &avail
	}
	return ms
}

// userHZ is the unit of /proc/stat's counters (USER_HZ, 100 on Linux).
const userHZ = 100

// ParseProcStat reads the machine's cumulative busy CPU time from /proc/stat: the
// first "cpu" line's user, nice, system, irq, softirq and steal, in nanoseconds.
func ParseProcStat(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var busy uint64
		for i, v := range f[1:] {
			if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest and guest_nice are in user already
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: %q: %w", v, err)
			}
			busy += n
		}
		return busy * (uint64(time.Second) / userHZ), nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/stat: no cpu line")
}

// ParseMeminfo reads /proc/meminfo into a sample's memory: usage is total less
// free, the working set is usage less the inactive file cache (what the kubelet
// reports), available is total less the working set.
func ParseMeminfo(r io.Reader) (Sample, error) {
	vals := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return Sample{}, fmt.Errorf("/proc/meminfo %s: %w", key, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		vals[key] = n
	}
	if err := sc.Err(); err != nil {
		return Sample{}, err
	}
	total, ok := vals["MemTotal"]
	if !ok {
		return Sample{}, fmt.Errorf("/proc/meminfo: no MemTotal")
	}
	usage := total - min(vals["MemFree"], total)
	ws := usage - min(vals["Inactive(file)"], usage)
	return Sample{MemoryUsageBytes: usage, MemoryWorkingSetBytes: ws, MemoryAvailableBytes: total - ws}, nil
}
