package sim

import (
	"encoding/json"
	"hash/fnv"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The usage a simulated container shows without a request, and what a simulated
// node uses for itself besides its pods.
var (
	defaultContainerCPU    = resource.MustParse("5m")
	defaultContainerMemory = resource.MustParse("16Mi")
	systemCPU              = resource.MustParse("100m")
	systemMemory           = resource.MustParse("256Mi")
)

// usageFactor is the share of its requests a pod uses: between 0.3 and 0.7, fixed
// per pod (from its uid), so that the numbers are plausible, differ between pods
// and stay put between two looks.
func usageFactor(uid string) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return 0.3 + float64(h.Sum32()%41)/100
}

// SimulatedSummary is the stats Summary of a simulated node at now: no container
// runs, so the numbers are made up from the pods' requests. Each container of a
// Running pod uses a share of its cpu and memory requests (5m and 16Mi without
// one; usageFactor), its cumulative CPU is that rate since the pod started; the node
// uses its pods' sum plus 100m and 256Mi of its own, within its capacity.
func SimulatedSummary(name string, capacity corev1.ResourceList, started time.Time, pods []*corev1.Pod, now time.Time) statsapi.Summary {
	at := metav1.NewTime(now)
	cpuStats := func(nanoCores uint64, since time.Time) *statsapi.CPUStats {
		secs := max(now.Sub(since).Seconds(), 0)
		total := uint64(float64(nanoCores) * secs)
		return &statsapi.CPUStats{Time: at, UsageNanoCores: &nanoCores, UsageCoreNanoSeconds: &total}
	}
	memStats := func(bytes uint64) *statsapi.MemoryStats {
		return &statsapi.MemoryStats{Time: at, WorkingSetBytes: &bytes, UsageBytes: &bytes}
	}
	out := statsapi.Summary{Pods: []statsapi.PodStats{}}
	nodeCPU, nodeMem := uint64(systemCPU.MilliValue())*1e6, uint64(systemMemory.Value())
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		start := p.CreationTimestamp.Time
		if p.Status.StartTime != nil {
			start = p.Status.StartTime.Time
		}
		f := usageFactor(string(p.UID))
		ps := statsapi.PodStats{PodRef: statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)},
			StartTime: metav1.NewTime(start), Containers: []statsapi.ContainerStats{}}
		var podCPU, podMem uint64
		for _, c := range p.Spec.Containers {
			cpu, mem := defaultContainerCPU, defaultContainerMemory
			if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok && !q.IsZero() {
				cpu = q
			}
			if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok && !q.IsZero() {
				mem = q
			}
			nc := uint64(float64(cpu.MilliValue()) * 1e6 * f)
			ws := uint64(float64(mem.Value()) * f)
			podCPU, podMem = podCPU+nc, podMem+ws
			ps.Containers = append(ps.Containers, statsapi.ContainerStats{Name: c.Name, StartTime: metav1.NewTime(start),
				CPU: cpuStats(nc, start), Memory: memStats(ws)})
		}
		ps.CPU, ps.Memory = cpuStats(podCPU, start), memStats(podMem)
		nodeCPU, nodeMem = nodeCPU+podCPU, nodeMem+podMem
		out.Pods = append(out.Pods, ps)
	}
	if q, ok := capacity[corev1.ResourceCPU]; ok {
		nodeCPU = min(nodeCPU, uint64(q.MilliValue())*1e6)
	}
	if q, ok := capacity[corev1.ResourceMemory]; ok {
		nodeMem = min(nodeMem, uint64(q.Value()))
	}
	out.Node = statsapi.NodeStats{NodeName: name, StartTime: metav1.NewTime(started), CPU: cpuStats(nodeCPU, started), Memory: memStats(nodeMem)}
	if q, ok := capacity[corev1.ResourceMemory]; ok {
		avail := uint64(q.Value()) - nodeMem
		out.Node.Memory.AvailableBytes = &avail
	}
	return out
}

// podsByNode is the index of the watched pods by node name.
const podsByNode = "node"

func indexByNode(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

// StatsHandler serves GET /stats/summary for every simulated node on one listener:
// the node is the one whose InternalIP the client dialled (NodeIP: loopback
// addresses). Another address answers 404.
func (s *Simulator) StatsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats/summary", func(w http.ResponseWriter, r *http.Request) {
		addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		var n *node
		if tcp, ok := addr.(*net.TCPAddr); ok {
			n = s.byIP[tcp.IP.String()]
		}
		if n == nil {
			http.Error(w, "no simulated node at this address", http.StatusNotFound)
			return
		}
		sum, ok := s.summary(n, time.Now())
		if !ok {
			http.Error(w, "stats summary: not collected yet", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&sum)
	})
	return mux
}

// summary is node n's Summary from the watched pods; ok is false before the watch.
func (s *Simulator) summary(n *node, now time.Time) (statsapi.Summary, bool) {
	if s.watched.Load() == nil {
		return statsapi.Summary{}, false
	}
	objs, err := s.pods.GetIndexer().ByIndex(podsByNode, n.info.Name)
	if err != nil {
		return statsapi.Summary{}, false
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	return SimulatedSummary(n.info.Name, n.info.Capacity, s.started, pods, now), true
}

var _ cache.IndexFunc = indexByNode
