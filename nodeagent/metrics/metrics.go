package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Probe results, as the kubelet labels them.
const (
	ProbeSuccess = "successful"
	ProbeFailure = "failed"
)

// podStartBuckets are the kubelet's pod start duration buckets, in seconds.
var podStartBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}

// imagePullBuckets are the image pull duration buckets, in seconds.
var imagePullBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Agent is the registry and the instruments of one node agent process. A nil *Agent
// measures nothing, so the agent's tests need none. It is safe for concurrent use.
type Agent struct {
	reg          *prometheus.Registry
	podStart     prometheus.Histogram
	probes       *prometheus.CounterVec // probe_type, result
	imagePull    prometheus.Histogram
	pullFailures prometheus.Counter

	mu      sync.Mutex
	running func() (pods, containers int)
}

// New makes the agent's registry with its instruments and the Go and process collectors.
func New() *Agent {
	a := &Agent{
		reg: prometheus.NewRegistry(),
		podStart: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kubelet_pod_start_duration_seconds",
			Help:    "Duration in seconds from a pod's creation to all its containers started.",
			Buckets: podStartBuckets,
		}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prober_probe_total",
			Help: "Cumulative number of liveness and readiness probes of containers by type and result.",
		}, []string{"probe_type", "result"}),
		imagePull: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kubelet_image_pull_duration_seconds",
			Help:    "Duration in seconds of the image pulls that succeeded.",
			Buckets: imagePullBuckets,
		}),
		pullFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubelet_image_pull_failures_total",
			Help: "Image pulls that failed.",
		}),
	}
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kubelet_running_pods",
		Help: "Number of pods that have a running pod sandbox (simulated nodes: pods running).",
	}, func() float64 { p, _ := a.readRunning(); return float64(p) })
	containers := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "kubelet_running_containers",
		Help:        "Number of containers currently running.",
		ConstLabels: prometheus.Labels{"container_state": "running"},
	}, func() float64 { _, c := a.readRunning(); return float64(c) })
	a.reg.MustRegister(a.podStart, a.probes, a.imagePull, a.pullFailures, running, containers,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return a
}

// Handler serves the registry (GET /metrics).
func (a *Agent) Handler() http.Handler {
	return promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{Registry: a.reg})
}

// Registry is the agent's registry.
func (a *Agent) Registry() *prometheus.Registry { return a.reg }

// CountRunning sets how the running pods and containers are counted at scrape time.
func (a *Agent) CountRunning(f func() (pods, containers int)) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.running = f
	a.mu.Unlock()
}

func (a *Agent) readRunning() (int, int) {
	a.mu.Lock()
	f := a.running
	a.mu.Unlock()
	if f == nil {
		return 0, 0
	}
	return f()
}

// PodStarted observes a pod whose containers all started, created d ago.
func (a *Agent) PodStarted(d time.Duration) {
	if a != nil {
		a.podStart.Observe(d.Seconds())
	}
}

// Probed counts one probe run of probeType (Liveness, Readiness) with its result.
func (a *Agent) Probed(probeType string, ok bool) {
	if a == nil {
		return
	}
	result := ProbeSuccess
	if !ok {
		result = ProbeFailure
	}
	a.probes.WithLabelValues(probeType, result).Inc()
}

// ImagePulled observes one image pull that took d, or counts it failed.
func (a *Agent) ImagePulled(d time.Duration, err error) {
	if a == nil {
		return
	}
	if err != nil {
		a.pullFailures.Inc()
		return
	}
	a.imagePull.Observe(d.Seconds())
}
