package stats

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// DefaultInterval is how often a Collector samples (metrics-server's resolution
// is 15s; the kubelet's housekeeping 10s).
const DefaultInterval = 10 * time.Second

// Engine is what the Collector needs of the engine.
type Engine interface {
	Stats(ctx context.Context, id string) (runtime.Stats, error)
}

// Pods is what the Collector needs of the agent: its pods and their containers'
// engine ids (an error satisfying runtime.IsNotFound for one not running).
type Pods interface {
	Pods() []*corev1.Pod
	ContainerID(namespace, pod, container string, previous bool) (string, error)
}

// Collector samples the node and its pods' containers every Interval and keeps the
// Summary of the last round. It is safe for concurrent use.
type Collector struct {
	NodeName string
	Engine   Engine
	Pods     Pods
	Interval time.Duration // 0 means DefaultInterval
	ProcDir  string        // "" means /proc
	Log      logrus.FieldLogger

	started time.Time

	mu      sync.Mutex
	node    History
	history map[string]History // by container id
	summary statsapi.Summary
	done    bool // a round completed
}

// Run samples until ctx ends, the first round at once.
func (c *Collector) Run(ctx context.Context) {
	every := c.Interval
	if every <= 0 {
		every = DefaultInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		c.Collect(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Summary is the last round's Summary; ok is false before the first round.
func (c *Collector) Summary() (statsapi.Summary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.summary, c.done
}

// Collect takes one round of samples and builds the Summary.
func (c *Collector) Collect(ctx context.Context) {
	c.mu.Lock()
	if c.started.IsZero() {
		c.started = time.Now()
		c.history = map[string]History{}
	}
	prevNode, prev := c.node, c.history
	c.mu.Unlock()

	node := Node{Name: c.NodeName, StartTime: c.started, History: prevNode}
	if s, err := c.nodeSample(); err == nil {
		node.History = prevNode.Add(s)
	} else if c.Log != nil {
		c.Log.WithError(err).Debug("node stats")
	}
	next := map[string]History{}
	var pods []Pod
	for _, p := range c.Pods.Pods() {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		pod := Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)}
		if p.Status.StartTime != nil {
			pod.StartTime = p.Status.StartTime.Time
		}
		started := map[string]time.Time{}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil {
				started[cs.Name] = cs.State.Running.StartedAt.Time
			}
		}
		for _, ctr := range p.Spec.Containers {
			id, err := c.Pods.ContainerID(p.Namespace, p.Name, ctr.Name, false)
			if err != nil {
				continue
			}
			st, err := c.Engine.Stats(ctx, id)
			if err != nil {
				if c.Log != nil && !runtime.IsNotFound(err) {
					c.Log.WithError(err).WithField("container", id).Debug("container stats")
				}
				continue
			}
			h := prev[id].Add(Sample{Time: st.Time, CPUUsageNanos: st.CPUUsageNanos,
				MemoryUsageBytes: st.MemoryUsageBytes, MemoryWorkingSetBytes: st.MemoryWorkingSetBytes})
			next[id] = h
			pod.Containers = append(pod.Containers, Container{Name: ctr.Name, StartTime: started[ctr.Name], History: h})
		}
		pods = append(pods, pod)
	}
	sum := Build(node, pods)
	c.mu.Lock()
	c.node, c.history, c.summary, c.done = node.History, next, sum, true
	c.mu.Unlock()
}

// nodeSample reads the machine's CPU and memory from /proc.
func (c *Collector) nodeSample() (Sample, error) {
	dir := c.ProcDir
	if dir == "" {
		dir = "/proc"
	}
	now := time.Now()
	f, err := os.Open(filepath.Join(dir, "stat"))
	if err != nil {
		return Sample{}, err
	}
	cpu, err := ParseProcStat(f)
	_ = f.Close()
	if err != nil {
		return Sample{}, err
	}
	m, err := os.Open(filepath.Join(dir, "meminfo"))
	if err != nil {
		return Sample{}, err
	}
	s, err := ParseMeminfo(m)
	_ = m.Close()
	if err != nil {
		return Sample{}, err
	}
	s.Time, s.CPUUsageNanos = now, cpu
	return s, nil
}
