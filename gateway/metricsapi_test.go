package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/retry"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

func u64(v uint64) *uint64 { return &v }

// fakeSummary is a node's Summary with one container per pod: cpu in nanocores
// and memory in bytes.
func fakeSummary(node string, pods map[string][2]uint64, uids map[string]types.UID) statsapi.Summary {
	at := metav1.NewTime(time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC))
	sum := statsapi.Summary{Node: statsapi.NodeStats{NodeName: node,
		CPU:    &statsapi.CPUStats{Time: at, UsageNanoCores: u64(1_500_000_000), UsageCoreNanoSeconds: u64(9e12)},
		Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(2 << 30), UsageBytes: u64(3 << 30)}}}
	for name, use := range pods {
		ns, pod, _ := strings.Cut(name, "/")
		ps := statsapi.PodStats{PodRef: statsapi.PodReference{Namespace: ns, Name: pod, UID: string(uids[name])}}
		c := statsapi.ContainerStats{Name: "c", CPU: &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: u64(5e9)},
			Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(use[1])}}
		if use[0] > 0 {
			c.CPU.UsageNanoCores = u64(use[0])
		}
		ps.Containers = append(ps.Containers, c)
		sum.Pods = append(sum.Pods, ps)
	}
	return sum
}

// TestMetricsAPI: discovery lists metrics.k8s.io; NodeMetrics and PodMetrics come
// from the Ready nodes' /stats/summary (a fake agent); a node whose agent refuses,
// a NotReady node and one without a daemon port are left out; a pod without a CPU
// rate yet is left out; gets, selectors and the cache.
func TestMetricsAPI(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()

	pods := map[string]corev1.PodSpec{"default/web": {NodeName: "n1"}, "default/db": {NodeName: "n1"}, "kube-system/dns": {NodeName: "n1"},
		"default/new": {NodeName: "n1"}, "default/ghost": {NodeName: "n1"}}
	uids := map[string]types.UID{}
	for name, spec := range pods {
		ns, pod, _ := strings.Cut(name, "/")
		spec.Containers = []corev1.Container{{Name: "c", Image: "i"}}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns, Labels: map[string]string{"app": pod}}, Spec: spec}
		if pod == "ghost" {
			continue // the node reports a pod the store does not have
		}
		got, err := h.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		uids[name] = got.UID
	}
	var scrapes atomic.Int32
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stats/summary" {
			http.NotFound(w, r)
			return
		}
		scrapes.Add(1)
		_ = json.NewEncoder(w).Encode(fakeSummary("n1", map[string][2]uint64{
			"default/web": {250_000_000, 64 << 20}, "default/db": {5_000_000, 128 << 20}, "kube-system/dns": {1_000_000, 8 << 20},
			"default/new": {0, 1 << 20}, "default/ghost": {1, 1}}, uids))
	}))
	t.Cleanup(agent.Close)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := portOf(t, dead.Addr().String())
	dead.Close()
	for _, n := range []struct {
		name  string
		port  int
		ready corev1.ConditionStatus
	}{{"n1", portOf(t, agent.Listener.Addr().String()), corev1.ConditionTrue}, {"dead", deadPort, corev1.ConditionTrue},
		{"notready", portOf(t, agent.Listener.Addr().String()), corev1.ConditionFalse}, {"noport", 0, corev1.ConditionTrue}} {
		if _, err := h.client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{"role": n.name}}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create node: %v", err)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := h.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
			cur.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(n.port)
			cur.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: n.ready}}
			_, err = h.client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("node status: %v", err)
		}
	}

	t.Run("discovery", func(t *testing.T) {
		dc, err := discovery.NewDiscoveryClientForConfig(h.config)
		if err != nil {
			t.Fatal(err)
		}
		groups, err := dc.ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range groups.Groups {
			found = found || (g.Name == "metrics.k8s.io" && g.PreferredVersion.Version == "v1beta1")
		}
		if !found {
			t.Fatalf("groups %+v lack metrics.k8s.io/v1beta1", groups.Groups)
		}
		rl, err := dc.ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rl.APIResources {
			got = append(got, r.Name+"/"+r.Kind+"/"+map[bool]string{true: "namespaced", false: "cluster"}[r.Namespaced]+"/"+strings.Join(r.Verbs, ","))
		}
		want := []string{"nodes/NodeMetrics/cluster/get,list", "pods/PodMetrics/namespaced/get,list"}
		if !slices.Equal(got, want) {
			t.Errorf("resources = %v, want %v", got, want)
		}
	})

	mc, err := metricsclient.NewForConfig(h.config)
	if err != nil {
		t.Fatal(err)
	}
	m := mc.MetricsV1beta1()
	t.Run("nodes", func(t *testing.T) {
		list, err := m.NodeMetricses().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "n1" {
			t.Fatalf("node metrics = %+v, want n1 only", list.Items)
		}
		nm := list.Items[0]
		if cpu, mem := nm.Usage.Cpu().MilliValue(), nm.Usage.Memory().Value(); cpu != 1500 || mem != 2<<30 || nm.Window.Duration != metricsWindow || nm.Timestamp.IsZero() || nm.Labels["role"] != "n1" {
			t.Errorf("n1 = cpu %dm memory %d window %s timestamp %s labels %v", cpu, mem, nm.Window.Duration, nm.Timestamp, nm.Labels)
		}
		one, err := m.NodeMetricses().Get(ctx, "n1", metav1.GetOptions{})
		if err != nil || one.Name != "n1" {
			t.Errorf("get n1 = %+v, %v", one, err)
		}
		for _, name := range []string{"dead", "notready", "noport", "nosuch"} {
			if _, err := m.NodeMetricses().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get %s: %v, want NotFound", name, err)
			}
		}
		sel, err := m.NodeMetricses().List(ctx, metav1.ListOptions{LabelSelector: "role=dead"})
		if err != nil || len(sel.Items) != 0 {
			t.Errorf("role=dead: %+v, %v", sel, err)
		}
	})
	t.Run("pods", func(t *testing.T) {
		names := func(l []string) string { return strings.Join(l, " ") }
		tests := []struct {
			ns, selector, field, want string
		}{
			{"", "", "", "default/db default/web kube-system/dns"},
			{"default", "", "", "default/db default/web"},
			{"default", "app=web", "", "default/web"},
			{"", "", "metadata.namespace=kube-system", "kube-system/dns"},
			{"nosuch", "", "", ""},
		}
		for _, tt := range tests {
			list, err := m.PodMetricses(tt.ns).List(ctx, metav1.ListOptions{LabelSelector: tt.selector, FieldSelector: tt.field})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, pm := range list.Items {
				got = append(got, pm.Namespace+"/"+pm.Name)
			}
			if names(got) != tt.want {
				t.Errorf("pods in %q (%q %q) = %v, want %s", tt.ns, tt.selector, tt.field, got, tt.want)
			}
		}
		web, err := m.PodMetricses("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(web.Containers) != 1 || web.Containers[0].Name != "c" || web.Containers[0].Usage.Cpu().MilliValue() != 250 ||
			web.Containers[0].Usage.Memory().Value() != 64<<20 || web.Labels["app"] != "web" {
			t.Errorf("web = %+v", web)
		}
		for _, name := range []string{"new", "ghost", "nosuch"} {
			if _, err := m.PodMetricses("default").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get %s: %v, want NotFound", name, err)
			}
		}
	})
	t.Run("cached", func(t *testing.T) {
		before := scrapes.Load()
		for range 3 {
			if _, err := m.NodeMetricses().List(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if after := scrapes.Load(); after != before {
			t.Errorf("3 lists within the cache's life scraped %d times", after-before)
		}
	})
	t.Run("raw JSON", func(t *testing.T) {
		for path, want := range map[string][]string{
			"/apis/metrics.k8s.io":                                     {`"kind":"APIGroup"`, `"preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1"`},
			"/apis/metrics.k8s.io/v1beta1/nodes":                       {`"kind":"NodeMetricsList"`, `"apiVersion":"metrics.k8s.io/v1beta1"`, `"window":"10s"`, `"cpu":"1500m"`},
			"/apis/metrics.k8s.io/v1beta1/nodes/n1":                    {`"kind":"NodeMetrics"`, `"timestamp":"2026-11-26T08:00:00Z"`},
			"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web": {`"kind":"PodMetrics"`, `"containers":[{"name":"c","usage":{"cpu":"250m","memory":"64Mi"}}]`},
			"/apis/metrics.k8s.io/v1beta1/nodes/nosuch":                {`"kind":"Status"`, `"code":404`, `nodes.metrics.k8s.io \"nosuch\" not found`},
		} {
			resp, err := http.Get(h.http.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, w := range want {
				if !strings.Contains(string(body), w) {
					t.Errorf("%s lacks %s: %s", path, w, body)
				}
			}
		}
	})
	t.Run("watch refused", func(t *testing.T) {
		resp, err := http.Get(h.http.URL + "/apis/metrics.k8s.io/v1beta1/pods?watch=true")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), `"kind":"Status"`) {
			t.Errorf("watch: %d %s", resp.StatusCode, body)
		}
	})
}
