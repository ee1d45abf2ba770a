package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// servePods answers /pods: the agent's pods as a v1 PodList.
func (s *Server) servePods(w http.ResponseWriter, _ *http.Request) {
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []corev1.Pod{}}
	for _, p := range s.cfg.Host.Pods() {
		list.Items = append(list.Items, *p)
	}
	writeJSON(w, &list)
}

// MachineInfo is /spec: the machine and engine, with cAdvisor's field names.
type MachineInfo struct {
	NumCores           int    `json:"num_cores"`
	MemoryCapacity     int64  `json:"memory_capacity"`
	MachineID          string `json:"machine_id,omitempty"`
	KernelVersion      string `json:"kernel_version"`
	ContainerOSVersion string `json:"container_os_version"`
	DockerVersion      string `json:"docker_version"`
	DockerAPIVersion   string `json:"docker_api_version,omitempty"`
}

// machineInfo maps the engine's Info to /spec.
func machineInfo(in runtime.Info) MachineInfo {
	return MachineInfo{
		NumCores: in.NCPU, MemoryCapacity: in.MemTotal, MachineID: in.ID,
		KernelVersion: in.KernelVersion, ContainerOSVersion: in.OperatingSystem,
		DockerVersion: in.Version, DockerAPIVersion: in.APIVersion,
	}
}

func (s *Server) serveSpec(w http.ResponseWriter, r *http.Request) {
	in, err := s.cfg.Runtime.Info(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("engine info: %w", err))
		return
	}
	writeJSON(w, machineInfo(in))
}

// ContainerStats is one container's usage sample in /stats.
type ContainerStats struct {
	Name      string       `json:"name"`
	ID        string       `json:"id"`
	Timestamp time.Time    `json:"timestamp"`
	CPU       CPUStats     `json:"cpu"`
	Memory    MemoryStats  `json:"memory"`
	Network   NetworkStats `json:"network"`
}

// CPUStats is cumulative CPU time.
type CPUStats struct {
	UsageCoreNanoSeconds uint64 `json:"usageCoreNanoSeconds"`
}

// MemoryStats is memory use and limit.
type MemoryStats struct {
	UsageBytes uint64 `json:"usageBytes"`
	LimitBytes uint64 `json:"limitBytes,omitempty"`
}

// NetworkStats is traffic summed over the container's interfaces.
type NetworkStats struct {
	RxBytes uint64 `json:"rxBytes"`
	TxBytes uint64 `json:"txBytes"`
}

// PodStats is one pod's containers in /stats.
type PodStats struct {
	Namespace  string           `json:"namespace"`
	Name       string           `json:"name"`
	UID        string           `json:"uid"`
	Containers []ContainerStats `json:"containers"`
}

// Stats is /stats: every running container of every pod.
type Stats struct {
	Node string     `json:"node"`
	Pods []PodStats `json:"pods"`
}

// containerStats maps one runtime sample.
func containerStats(name, id string, st runtime.Stats) ContainerStats {
	return ContainerStats{
		Name: name, ID: id, Timestamp: st.Time,
		CPU:     CPUStats{UsageCoreNanoSeconds: st.CPUUsageNanos},
		Memory:  MemoryStats{UsageBytes: st.MemoryUsageBytes, LimitBytes: st.MemoryLimitBytes},
		Network: NetworkStats{RxBytes: st.RxBytes, TxBytes: st.TxBytes},
	}
}

// sample reads one container's stats; a container that does not exist (not started,
// removed) gives ok false.
func (s *Server) sample(ctx context.Context, ns, pod, container string) (ContainerStats, bool, error) {
	id, err := s.cfg.Host.ContainerID(ns, pod, container, false)
	if runtime.IsNotFound(err) {
		return ContainerStats{}, false, nil
	}
	if err != nil {
		return ContainerStats{}, false, err
	}
	st, err := s.cfg.Runtime.Stats(ctx, id)
	if runtime.IsNotFound(err) {
		return ContainerStats{}, false, nil
	}
	if err != nil {
		return ContainerStats{}, false, err
	}
	return containerStats(container, id, st), true, nil
}

func (s *Server) serveAllStats(w http.ResponseWriter, r *http.Request) {
	out := Stats{Node: s.cfg.NodeName, Pods: []PodStats{}}
	for _, p := range s.cfg.Host.Pods() {
		ps := PodStats{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Containers: []ContainerStats{}}
		for _, c := range p.Spec.Containers {
			cs, ok, err := s.sample(r.Context(), p.Namespace, p.Name, c.Name)
			if err != nil {
				writeError(w, http.StatusInternalServerError, fmt.Errorf("stats of %s/%s %s: %w", p.Namespace, p.Name, c.Name, err))
				return
			}
			if ok {
				ps.Containers = append(ps.Containers, cs)
			}
		}
		out.Pods = append(out.Pods, ps)
	}
	writeJSON(w, &out)
}

func (s *Server) serveContainerStats(w http.ResponseWriter, r *http.Request) {
	ns, pod, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	cs, ok, err := s.sample(r.Context(), ns, pod, container)
	switch {
	case err != nil:
		writeError(w, errorCode(err), fmt.Errorf("stats of %s/%s %s: %w", ns, pod, container, err))
	case !ok:
		writeError(w, http.StatusNotFound, fmt.Errorf("container %s of pod %s/%s not found", container, ns, pod))
	default:
		writeJSON(w, &cs)
	}
}

// serveSummary answers /stats/summary: the kubelet stats API's Summary, as last
// collected (never collected per request).
func (s *Server) serveSummary(w http.ResponseWriter, _ *http.Request) {
	if s.cfg.Summary == nil {
		writeError(w, http.StatusServiceUnavailable, fmt.Errorf("stats summary: not collected on this node"))
		return
	}
	sum, ok := s.cfg.Summary.Summary()
	if !ok {
		writeError(w, http.StatusServiceUnavailable, fmt.Errorf("stats summary: not collected yet"))
		return
	}
	writeJSON(w, &sum)
}
