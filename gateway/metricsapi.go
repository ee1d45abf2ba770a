package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/kubeactor/kubeactor/persistence"
)

// The resource metrics API (metrics.k8s.io/v1beta1, what `kubectl top` and the
// horizontal pod autoscaler read), served by the API server itself instead of an
// aggregated metrics-server: on demand it scrapes the Ready nodes' agents for their
// kubelet stats Summary (/stats/summary), concurrently, each within
// metricsScrapeTimeout, and keeps each node's answer for metricsCacheTTL. A node
// that does not answer is left out.
var metricsGV = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}

const (
	// metricsCacheTTL is how long a node's Summary is reused (metrics-server's
	// resolution is 15s); a failed scrape is retried after a third of it.
	metricsCacheTTL = 15 * time.Second
	// metricsScrapeTimeout bounds one node's scrape.
	metricsScrapeTimeout = 5 * time.Second
	// metricsScrapers is how many nodes are scraped at once.
	metricsScrapers = 16
	// metricsWindow is the window of the agents' CPU rates: their collection
	// period (nodeagent/stats.DefaultInterval).
	metricsWindow = 10 * time.Second
)

// metricsAPIGroup is the group as /apis lists it.
func metricsAPIGroup() metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: metricsGV.String(), Version: metricsGV.Version}
	return metav1.APIGroup{Name: metricsGV.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
}

// metricsAPI serves the group's routes.
type metricsAPI struct {
	s       *Server
	scraper *nodeScraper
}

// mountMetricsAPI registers /apis/metrics.k8s.io and its resources.
func (s *Server) mountMetricsAPI(e *echo.Echo) {
	m := &metricsAPI{s: s, scraper: newNodeScraper(&http.Client{Transport: agentTransport})}
	base := "/apis/" + metricsGV.String()
	e.GET("/apis/"+metricsGV.Group, func(c echo.Context) error {
		g := metricsAPIGroup()
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		return writeJSON(c, http.StatusOK, &g)
	})
	e.GET(base, func(c echo.Context) error {
		verbs := metav1.Verbs{"get", "list"}
		return writeJSON(c, http.StatusOK, &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: metricsGV.String(),
			APIResources: []metav1.APIResource{
				{Name: "nodes", Namespaced: false, Kind: "NodeMetrics", Verbs: verbs},
				{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: verbs},
			},
		})
	})
	e.GET(base+"/nodes", m.listNodes)
	e.GET(base+"/nodes/:name", m.getNode)
	e.GET(base+"/pods", m.listPods)
	e.GET(base+"/namespaces/:namespace/pods", m.listPods)
	e.GET(base+"/namespaces/:namespace/pods/:name", m.getPod)
}

// listSelectors reads a list's labelSelector and fieldSelector (metadata.name and,
// for pods, metadata.namespace), refusing a watch as metrics-server does.
func listSelectors(c echo.Context) (labels.Selector, fields.Selector, error) {
	if w := c.QueryParam("watch"); w == "true" || w == "1" {
		return nil, nil, apierrors.NewMethodNotSupported(schema.GroupResource{Group: metricsGV.Group, Resource: strings.TrimPrefix(c.Path()[strings.LastIndex(c.Path(), "/"):], "/")}, "watch")
	}
	ls, err := labels.Parse(c.QueryParam("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("labelSelector: %v", err))
	}
	fs, err := fields.ParseSelector(c.QueryParam("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("fieldSelector: %v", err))
	}
	return ls, fs, nil
}

func (m *metricsAPI) listNodes(c echo.Context) error {
	ls, fs, err := listSelectors(c)
	if err != nil {
		return err
	}
	var nodes []*corev1.Node
	m.s.store.Snapshot("nodes").Ascend("", "", func(it *persistence.Item) bool {
		if n, ok := it.Object().(*corev1.Node); ok && ls.Matches(labels.Set(n.Labels)) && fs.Matches(fields.Set{"metadata.name": n.Name}) {
			nodes = append(nodes, n)
		}
		return true
	})
	sums := m.scraper.summaries(c.Request().Context(), nodes)
	list := metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: metricsGV.String()}, Items: []metricsv1beta1.NodeMetrics{}}
	now := m.s.now()
	for _, n := range nodes {
		if sum, ok := sums[n.Name]; ok {
			if nm, ok := nodeMetrics(n, sum, now); ok {
				list.Items = append(list.Items, nm)
			}
		}
	}
	return writeJSON(c, http.StatusOK, &list)
}

func (m *metricsAPI) getNode(c echo.Context) error {
	name := c.Param("name")
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: metricsGV.Group, Resource: "nodes"}, name)
	n, err := getTyped[*corev1.Node](m.s, "nodes", "", name)
	if err != nil {
		return notFound
	}
	sum, ok := m.scraper.summaries(c.Request().Context(), []*corev1.Node{n})[name]
	if !ok {
		return notFound
	}
	nm, ok := nodeMetrics(n, sum, m.s.now())
	if !ok {
		return notFound
	}
	nm.TypeMeta = metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: metricsGV.String()}
	return writeJSON(c, http.StatusOK, &nm)
}

// podsMetrics are the metrics of the stored pods the nodes report on, in
// (namespace, name) order; a pod whose uid differs from the stored one is left out.
func (m *metricsAPI) podsMetrics(ctx context.Context, nodes []*corev1.Node, keep func(*corev1.Pod) bool) []metricsv1beta1.PodMetrics {
	out := []metricsv1beta1.PodMetrics{}
	now := m.s.now()
	for _, sum := range m.scraper.summaries(ctx, nodes) {
		for _, ps := range sum.Pods {
			pod, err := getTyped[*corev1.Pod](m.s, "pods", ps.PodRef.Namespace, ps.PodRef.Name)
			if err != nil || string(pod.UID) != ps.PodRef.UID || !keep(pod) {
				continue
			}
			if pm, ok := podMetrics(pod, ps, now); ok {
				out = append(out, pm)
			}
		}
	}
	slices.SortFunc(out, func(a, b metricsv1beta1.PodMetrics) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// readyNodes are the stored nodes whose Ready condition is True.
func (m *metricsAPI) readyNodes() []*corev1.Node {
	var nodes []*corev1.Node
	m.s.store.Snapshot("nodes").Ascend("", "", func(it *persistence.Item) bool {
		if n, ok := it.Object().(*corev1.Node); ok && nodeReady(n) {
			nodes = append(nodes, n)
		}
		return true
	})
	return nodes
}

func (m *metricsAPI) listPods(c echo.Context) error {
	ls, fs, err := listSelectors(c)
	if err != nil {
		return err
	}
	ns := c.Param("namespace")
	items := m.podsMetrics(c.Request().Context(), m.readyNodes(), func(p *corev1.Pod) bool {
		return (ns == "" || p.Namespace == ns) && ls.Matches(labels.Set(p.Labels)) &&
			fs.Matches(fields.Set{"metadata.name": p.Name, "metadata.namespace": p.Namespace})
	})
	return writeJSON(c, http.StatusOK, &metricsv1beta1.PodMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: metricsGV.String()}, Items: items})
}

func (m *metricsAPI) getPod(c echo.Context) error {
	ns, name := c.Param("namespace"), c.Param("name")
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: metricsGV.Group, Resource: "pods"}, name)
	pod, err := getTyped[*corev1.Pod](m.s, "pods", ns, name)
	if err != nil || pod.Spec.NodeName == "" {
		return notFound
	}
	node, err := getTyped[*corev1.Node](m.s, "nodes", "", pod.Spec.NodeName)
	if err != nil {
		return notFound
	}
	items := m.podsMetrics(c.Request().Context(), []*corev1.Node{node}, func(p *corev1.Pod) bool { return p.Namespace == ns && p.Name == name })
	if len(items) == 0 {
		return notFound
	}
	pm := items[0]
	pm.TypeMeta = metav1.TypeMeta{Kind: "PodMetrics", APIVersion: metricsGV.String()}
	return writeJSON(c, http.StatusOK, &pm)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// cpuQuantity is a rate in nanocores; memoryQuantity bytes.
func cpuQuantity(nanoCores uint64) resource.Quantity {
	return *resource.NewScaledQuantity(int64(nanoCores), resource.Nano)
}

func memoryQuantity(bytes uint64) resource.Quantity {
	return *resource.NewQuantity(int64(bytes), resource.BinarySI)
}

// nodeMetrics is a node's NodeMetrics from its Summary; ok is false when the
// Summary lacks the CPU rate or the working set.
func nodeMetrics(n *corev1.Node, sum statsapi.Summary, now time.Time) (metricsv1beta1.NodeMetrics, bool) {
	cpu, mem := sum.Node.CPU, sum.Node.Memory
	if cpu == nil || cpu.UsageNanoCores == nil || mem == nil || mem.WorkingSetBytes == nil {
		return metricsv1beta1.NodeMetrics{}, false
	}
	return metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: metav1.NewTime(now)},
		Timestamp:  cpu.Time,
		Window:     metav1.Duration{Duration: metricsWindow},
		Usage: corev1.ResourceList{
			corev1.ResourceCPU:    cpuQuantity(*cpu.UsageNanoCores),
			corev1.ResourceMemory: memoryQuantity(*mem.WorkingSetBytes),
		},
	}, true
}

// podMetrics is a pod's PodMetrics from its stats: the containers that have both a
// CPU rate and a working set; ok is false when none has.
func podMetrics(pod *corev1.Pod, ps statsapi.PodStats, now time.Time) (metricsv1beta1.PodMetrics, bool) {
	pm := metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels, CreationTimestamp: metav1.NewTime(now)},
		Window:     metav1.Duration{Duration: metricsWindow},
		Containers: []metricsv1beta1.ContainerMetrics{},
	}
	for _, c := range ps.Containers {
		if c.CPU == nil || c.CPU.UsageNanoCores == nil || c.Memory == nil || c.Memory.WorkingSetBytes == nil {
			continue
		}
		if c.CPU.Time.After(pm.Timestamp.Time) {
			pm.Timestamp = c.CPU.Time
		}
		pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: corev1.ResourceList{
			corev1.ResourceCPU:    cpuQuantity(*c.CPU.UsageNanoCores),
			corev1.ResourceMemory: memoryQuantity(*c.Memory.WorkingSetBytes),
		}})
	}
	return pm, len(pm.Containers) > 0
}

// nodeScraper fetches the nodes' Summaries, each node's at most once per
// metricsCacheTTL; concurrent callers share a scrape in flight.
type nodeScraper struct {
	client  *http.Client
	ttl     time.Duration
	timeout time.Duration
	sem     chan struct{}

	mu      sync.Mutex
	entries map[string]*scrape // by node name
}

// scrape is one node's scrape: done is closed when it ended; sum is nil if it failed.
type scrape struct {
	addr string
	done chan struct{}
	at   time.Time
	sum  *statsapi.Summary
}

func newNodeScraper(client *http.Client) *nodeScraper {
	return &nodeScraper{client: client, ttl: metricsCacheTTL, timeout: metricsScrapeTimeout,
		sem: make(chan struct{}, metricsScrapers), entries: map[string]*scrape{}}
}

// fresh tells whether a finished scrape may still be used at now.
func (ns *nodeScraper) fresh(sc *scrape, now time.Time) bool {
	if !isDone(sc) {
		return true // in flight: wait for it
	}
	ttl := ns.ttl
	if sc.sum == nil {
		ttl /= 3
	}
	return now.Sub(sc.at) < ttl
}

func isDone(sc *scrape) bool {
	select {
	case <-sc.done:
		return true
	default:
		return false
	}
}

// summaries returns the Summaries of the nodes that answered, by node name: Ready
// nodes with an agent endpoint only (a node reporting no daemon port is never
// dialled).
func (ns *nodeScraper) summaries(ctx context.Context, nodes []*corev1.Node) map[string]statsapi.Summary {
	now := time.Now()
	var wait []*scrape
	names := map[*scrape]string{}
	ns.mu.Lock()
	for name, sc := range ns.entries { // forget nodes not asked about for long
		if isDone(sc) && now.Sub(sc.at) > 10*ns.ttl {
			delete(ns.entries, name)
		}
	}
	for _, n := range nodes {
		if !nodeReady(n) || n.Status.DaemonEndpoints.KubeletEndpoint.Port <= 0 {
			continue
		}
		addr := agentHost(n)
		sc := ns.entries[n.Name]
		if sc == nil || sc.addr != addr || !ns.fresh(sc, now) {
			sc = &scrape{addr: addr, done: make(chan struct{})}
			ns.entries[n.Name] = sc
			go ns.run(sc)
		}
		wait = append(wait, sc)
		names[sc] = n.Name
	}
	ns.mu.Unlock()
	out := make(map[string]statsapi.Summary, len(wait))
	for _, sc := range wait {
		select {
		case <-sc.done:
		case <-ctx.Done():
			return out
		}
		if sc.sum != nil {
			out[names[sc]] = *sc.sum
		}
	}
	return out
}

// run scrapes one node, at most metricsScrapers at once.
func (ns *nodeScraper) run(sc *scrape) {
	ns.sem <- struct{}{}
	defer func() { <-ns.sem }()
	ctx, cancel := context.WithTimeout(context.Background(), ns.timeout)
	defer cancel()
	sum, err := ns.fetch(ctx, sc.addr)
	ns.mu.Lock()
	if err == nil {
		sc.sum = &sum
	}
	sc.at = time.Now()
	ns.mu.Unlock()
	close(sc.done)
}

func (ns *nodeScraper) fetch(ctx context.Context, addr string) (statsapi.Summary, error) {
	var sum statsapi.Summary
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/stats/summary", nil)
	if err != nil {
		return sum, err
	}
	resp, err := ns.client.Do(req)
	if err != nil {
		return sum, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sum, fmt.Errorf("stats summary of %s: %s", addr, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil {
		return sum, fmt.Errorf("stats summary of %s: %w", addr, err)
	}
	return sum, nil
}
