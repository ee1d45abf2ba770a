package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/persistence"
)

// The server's metrics, served at GET /metrics in Prometheus' text format, on a
// registry of the server's own (never the global default one, so that servers run
// side by side in one test process). Request metrics come from the measure
// middleware; the store's, the actors' and the scheduler's are read from their
// counters at scrape time (metricsCollector), so the hot paths only add to atomics.

// requestDurationBuckets are the API server's request latency buckets (Kubernetes').
var requestDurationBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// serverMetrics is the registry and the instruments the gateway updates itself.
type serverMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec   // verb, resource, subresource, code
	duration *prometheus.HistogramVec // verb, resource, subresource
	watchers *prometheus.GaugeVec     // resource
	expired  *prometheus.CounterVec   // resource: watches ended with a 410 for lagging

	mu       sync.RWMutex
	resolved map[requestLabels]requestInstruments // the children of requests and duration, by labels
}

// requestLabels are the labels of one request's metrics.
type requestLabels struct {
	verb, resource, sub string
	code                int
}

// requestInstruments are the children of the request metrics for one set of labels.
type requestInstruments struct {
	count    prometheus.Counter
	duration prometheus.Observer // nil: not timed (long-running)
}

// instruments resolves the children for l, once: a request then costs one map
// lookup, not two label hashes and their allocations.
func (m *serverMetrics) instruments(l requestLabels) requestInstruments {
	m.mu.RLock()
	in, ok := m.resolved[l]
	m.mu.RUnlock()
	if ok {
		return in
	}
	in.count = m.requests.WithLabelValues(l.verb, l.resource, l.sub, statusCode(l.code))
	if l.verb != "WATCH" && l.verb != "CONNECT" {
		in.duration = m.duration.WithLabelValues(l.verb, l.resource, l.sub)
	}
	m.mu.Lock()
	m.resolved[l] = in
	m.mu.Unlock()
	return in
}

func newServerMetrics(reg *prometheus.Registry, store *persistence.Store, sys func() *actors.System) (*serverMetrics, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &serverMetrics{
		reg:      reg,
		resolved: make(map[requestLabels]requestInstruments),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, resource, subresource and HTTP response code.",
		}, []string{"verb", "resource", "subresource", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, resource and subresource (watches and connections excluded).",
			Buckets: requestDurationBuckets,
		}, []string{"verb", "resource", "subresource"}),
		watchers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_registered_watchers",
			Help: "Number of currently open watches for a given resource.",
		}, []string{"resource"}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_terminated_watchers_total",
			Help: "Counter of watchers closed with 410 Gone because they fell too far behind.",
		}, []string{"resource"}),
	}
	for _, c := range []prometheus.Collector{
		m.requests, m.duration, m.watchers, m.expired,
		newMetricsCollector(store, sys),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// handler serves the registry.
func (m *serverMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the server's metrics registry, for other parts of the process to add
// their metrics to what GET /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// measure counts every request by verb, resource, subresource and code, and times
// those that are not long-running. It is the outermost middleware: traceAndLog has
// written any error's Status by the time it reads the code.
func (s *Server) measure(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		rq, _ := c.Get(requestKey).(*request)
		l := requestLabels{verb: requestVerb(c, rq), code: c.Response().Status}
		if rq != nil {
			l.resource, l.sub = rq.res.Name, rq.sub
		}
		in := s.metrics.instruments(l)
		in.count.Inc()
		if in.duration != nil {
			in.duration.Observe(time.Since(start).Seconds())
		}
		return err
	}
}

// requestVerb names a request's verb as kube-apiserver's request metrics do: GET of
// one object, LIST of a collection and WATCH when it watches; POST, PUT, PATCH (APPLY
// for a server-side apply patch) and DELETE (of one or of a collection) as the
// method; CONNECT for a streaming subresource (exec, attach, portforward, proxy). A
// request that names no resource (discovery, /metrics) is its method.
func requestVerb(c echo.Context, rq *request) string {
	method := c.Request().Method
	if rq == nil {
		return methodVerb(method)
	}
	if rq.sub != "" && rq.sub != "log" && streamingSubresources[rq.sub] {
		return "CONNECT"
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		if rq.watchPath {
			return "WATCH"
		}
		if rq.name != "" {
			return "GET"
		}
		if w := c.QueryParam("watch"); w == "true" || w == "1" {
			return "WATCH"
		}
		return "LIST"
	case http.MethodPatch:
		if strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), "application/apply-patch") {
			return "APPLY"
		}
	}
	return methodVerb(method)
}

// methodVerb is a method as HTTP spells it, "other" for a method HTTP does not define
// (a client must not make a new series per made-up method).
func methodVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// statusCodes are the label values of the codes, made once.
var statusCodes = func() []string {
	out := make([]string, 600)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

func statusCode(code int) string {
	if code >= 0 && code < len(statusCodes) {
		return statusCodes[code]
	}
	return strconv.Itoa(code)
}

// watchStarted counts an open watch of resource; the returned func counts it closed.
func (s *Server) watchStarted(resource string) func() {
	g := s.metrics.watchers.WithLabelValues(resource)
	g.Inc()
	return g.Dec
}

// metricsCollector reads the store's, the actors' and the scheduler's counters at
// scrape time.
type metricsCollector struct {
	store  *persistence.Store
	actors func() *actors.System // the actor system running now; nil on a follower

	objects, lean, apply, fsync, group          *prometheus.Desc
	messages, handling, mailbox, restarts, live *prometheus.Desc
	attempts, attemptDuration, pending          *prometheus.Desc
	eventsDropped                               *prometheus.Desc
}

func newMetricsCollector(store *persistence.Store, sys func() *actors.System) *metricsCollector {
	d := prometheus.NewDesc
	return &metricsCollector{
		store: store, actors: sys,
		objects: d("apiserver_storage_objects", "Number of stored objects at the time of last check split by resource.", []string{"resource"}, nil),
		lean:    d("kubeactor_store_lean_objects", "Current objects held as their stored JSON alone, decoded again when next read, at the last sweep.", nil, nil),
		apply:   d("kubeactor_store_apply_duration_seconds", "Latency of a store transaction: queueing, deciding, writing, the shared fsync and publishing.", nil, nil),
		fsync:   d("kubeactor_store_fsync_duration_seconds", "Latency of one group commit's synced write.", nil, nil),
		group:   d("kubeactor_store_commit_group_size", "Transactions committed together by one synced write.", nil, nil),

		messages: d("kubeactor_actor_messages_total", "Messages handled by the actors of a kind.", []string{"kind"}, nil),
		handling: d("kubeactor_actor_handling_seconds", "Time the actors of a kind spend handling one message.", []string{"kind"}, nil),
		mailbox:  d("kubeactor_actor_mailbox_depth", "Messages waiting in the mailboxes of the actors of a kind.", []string{"kind"}, nil),
		restarts: d("kubeactor_actor_restarts_total", "Restarts of the actors of a kind by their supervisor.", []string{"kind"}, nil),
		live:     d("kubeactor_actors", "Object actors of a kind alive now.", []string{"kind"}, nil),

		attempts:        d("scheduler_schedule_attempts_total", "Number of attempts to schedule pods, by the result: scheduled, unschedulable or error.", []string{"result"}, nil),
		attemptDuration: d("scheduler_scheduling_attempt_duration_seconds", "Scheduling attempt latency in seconds (the shards' bids and the merge).", nil, nil),
		pending:         d("scheduler_pending_pods", "Number of pending pods waiting for a decision, queued or backing off.", nil, nil),
		eventsDropped:   d("kubeactor_scheduler_events_dropped_total", "Number of the scheduler's event occurrences dropped because its event budget held the most it holds.", nil, nil),
	}
}

func (m *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.objects, m.lean, m.apply, m.fsync, m.group, m.messages, m.handling, m.mailbox, m.restarts, m.live,
		m.attempts, m.attemptDuration, m.pending, m.eventsDropped} {
		ch <- d
	}
}

func (m *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	st := m.store.Stats()
	for r, n := range st.Objects {
		ch <- prometheus.MustNewConstMetric(m.objects, prometheus.GaugeValue, float64(n), r)
	}
	ch <- prometheus.MustNewConstMetric(m.lean, prometheus.GaugeValue, float64(st.Lean))
	ch <- constHistogram(m.apply, st.Apply, 1e9)
	ch <- constHistogram(m.fsync, st.Fsync, 1e9)
	ch <- constHistogram(m.group, st.GroupSize, 1)

	sys := m.actors()
	if sys == nil {
		return // a follower runs no actors (master replicas)
	}
	as := sys.Stats()
	for _, a := range as.Actors {
		ch <- prometheus.MustNewConstMetric(m.messages, prometheus.CounterValue, float64(a.Messages), a.Kind)
		ch <- constHistogram(m.handling, a.Handling, 1e9, a.Kind)
		ch <- prometheus.MustNewConstMetric(m.mailbox, prometheus.GaugeValue, float64(a.MailboxDepth), a.Kind)
		ch <- prometheus.MustNewConstMetric(m.restarts, prometheus.CounterValue, float64(a.Restarts), a.Kind)
		if a.Objects {
			ch <- prometheus.MustNewConstMetric(m.live, prometheus.GaugeValue, float64(a.Live), a.Kind)
		}
	}
	if sc := as.Scheduler; sc != nil {
		for _, r := range []struct {
			result string
			n      int64
		}{{"scheduled", sc.Scheduled}, {"unschedulable", sc.Unschedulable}, {"error", sc.Errors}} {
			ch <- prometheus.MustNewConstMetric(m.attempts, prometheus.CounterValue, float64(r.n), r.result)
		}
		ch <- constHistogram(m.attemptDuration, sc.Attempt, 1e9)
		ch <- prometheus.MustNewConstMetric(m.pending, prometheus.GaugeValue, float64(sc.Pending))
		ch <- prometheus.MustNewConstMetric(m.eventsDropped, prometheus.CounterValue, float64(sc.EventsDropped))
	}
}

// constHistogram turns a snapshot into a Prometheus histogram, its values divided by
// per (1e9: nanoseconds as seconds; dividing keeps bounds such as 0.005 exact).
func constHistogram(d *prometheus.Desc, h persistence.HistogramSnapshot, per float64, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Upper))
	for i, u := range h.Upper {
		buckets[float64(u)/per] = h.Cumulative[i]
	}
	return prometheus.MustNewConstHistogram(d, h.Count, float64(h.Sum)/per, buckets, labels...)
}
