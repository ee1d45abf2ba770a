package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// sample finds the value of one metric family's sample whose labels include want:
// a counter's or gauge's value, a histogram's count.
func sample(t testing.TB, reg prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metrics
				}
			}
			return value(m), true
		}
	}
	return 0, false
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// Every request is counted with its verb as Kubernetes names it, its resource and
// subresource, and the code it was answered with; only the short ones are timed.
func TestRequestMetricsLabels(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	reg := h.server.Registry()
	const pods = "/api/v1/namespaces/default/pods"
	if code, body, _ := h.do(http.MethodPost, pods, "application/json", podJSON("web")); code != http.StatusCreated {
		t.Fatalf("create web: %d %s", code, body)
	}
	tests := []struct {
		name, method, path, body, contentType string
		verb, resource, sub                   string
		code                                  int // 0: whatever was answered (checked equal to the label)
		timed                                 bool
	}{
		{"create", "POST", pods, podJSON("api"), "application/json", "POST", "pods", "", 201, true},
		{"create conflict", "POST", pods, podJSON("web"), "application/json", "POST", "pods", "", 409, true},
		{"create bad body", "POST", pods, "{", "application/json", "POST", "pods", "", 400, true},
		{"get", "GET", pods + "/web", "", "", "GET", "pods", "", 200, true},
		{"get missing", "GET", pods + "/nope", "", "", "GET", "pods", "", 404, true},
		{"list", "GET", pods, "", "", "LIST", "pods", "", 200, true},
		{"list all namespaces", "GET", "/api/v1/pods", "", "", "LIST", "pods", "", 200, true},
		{"list nodes", "GET", "/api/v1/nodes", "", "", "LIST", "nodes", "", 200, true},
		{"watch by query", "GET", pods + "?watch=true&timeoutSeconds=1", "", "", "WATCH", "pods", "", 200, false},
		{"watch path", "GET", "/api/v1/watch/namespaces/default/pods?timeoutSeconds=1", "", "", "WATCH", "pods", "", 200, false},
		{"update status", "PUT", pods + "/web/status", "{", "application/json", "PUT", "pods", "status", 400, true},
		{"patch", "PATCH", pods + "/web", `{"metadata":{"labels":{"a":"b"}}}`, "application/merge-patch+json", "PATCH", "pods", "", 200, true},
		{"delete missing", "DELETE", pods + "/nope", "", "", "DELETE", "pods", "", 404, true},
		{"delete collection", "DELETE", "/api/v1/namespaces/empty/pods", "", "", "DELETE", "pods", "", 200, true},
		{"exec", "POST", pods + "/web/exec?command=ls&container=nginx", "", "", "CONNECT", "pods", "exec", 0, false},
		{"log", "GET", pods + "/web/log", "", "", "GET", "pods", "log", 0, true},
		{"discovery", "GET", "/api", "", "", "GET", "", "", 200, true},
		{"unknown path", "GET", "/api/v1/nopes", "", "", "GET", "", "", 404, true},
		{"made-up method", "BREW", "/api", "", "", "other", "", "", 0, true},
		{"delete", "DELETE", pods + "/api", "", "", "DELETE", "pods", "", 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timedBefore, _ := sample(t, reg, "apiserver_request_duration_seconds", map[string]string{"verb": tt.verb, "resource": tt.resource, "subresource": tt.sub})
			code, body, _ := h.do(tt.method, tt.path, tt.contentType, tt.body)
			if tt.code != 0 && code != tt.code {
				t.Fatalf("%s %s: %d %s, want %d", tt.method, tt.path, code, body, tt.code)
			}
			labels := map[string]string{"verb": tt.verb, "resource": tt.resource, "subresource": tt.sub, "code": fmt.Sprint(code)}
			// A streamed answer can reach the client before the middleware has counted it.
			eventually(t, fmt.Sprintf("apiserver_request_total%v", labels), func() bool {
				n, _ := sample(t, reg, "apiserver_request_total", labels)
				return n >= 1
			})
			timed, _ := sample(t, reg, "apiserver_request_duration_seconds", map[string]string{"verb": tt.verb, "resource": tt.resource, "subresource": tt.sub})
			if got := timed - timedBefore; (got == 1) != tt.timed {
				t.Errorf("timed %v more requests, want timed=%v", got, tt.timed)
			}
		})
	}
}

// The collectors read the store's and the actors' counters at scrape time: the
// stored objects per resource are the store's, and the other families are served.
func TestMetricsEndpointReadsTheStore(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := h.client.CoreV1().Pods("default").Create(ctx, newPod(name).obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.client.CoreV1().Pods("default").Delete(ctx, "b", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod b gone", func() bool { _, err := h.store.Get(podKey("default", "b")); return err != nil })
	code, body, hdr := h.do(http.MethodGet, "/metrics", "", "")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", code, hdr.Get("Content-Type"))
	}
	objects := h.store.Stats().Objects
	for _, want := range []string{
		fmt.Sprintf("apiserver_storage_objects{resource=\"pods\"} %d\n", objects["pods"]),
		fmt.Sprintf("apiserver_storage_objects{resource=\"namespaces\"} %d\n", objects["namespaces"]),
		"kubeactor_store_apply_duration_seconds_bucket{le=\"0.005\"}",
		"kubeactor_store_fsync_duration_seconds_count",
		"kubeactor_store_commit_group_size_bucket{le=\"1\"}",
		"kubeactor_actor_messages_total{kind=\"pods\"}",
		"kubeactor_actor_handling_seconds_count{kind=\"pods-manager\"}",
		"kubeactor_actor_mailbox_depth{kind=\"pods\"}",
		"kubeactor_actor_restarts_total{kind=\"pods\"} 0\n",
		"kubeactor_actors{kind=\"nodes\"}",
		"apiserver_request_duration_seconds_bucket{resource=\"pods\",subresource=\"\",verb=\"POST\",le=\"0.005\"}",
		"go_goroutines",
		"process_cpu_seconds_total",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	if objects["pods"] != 2 {
		t.Errorf("the store counts %d pods, want 2", objects["pods"])
	}
	if strings.Contains(body, "scheduler_schedule_attempts_total") {
		t.Errorf("scheduler metrics served by a system without a scheduler")
	}
}

// An open watch counts in apiserver_registered_watchers until it ends.
func TestMetricsCountWatchers(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	reg := h.server.Registry()
	watchers := func() float64 {
		n, _ := sample(t, reg, "apiserver_registered_watchers", map[string]string{"resource": "services"})
		return n
	}
	w, err := h.client.CoreV1().Services("default").Watch(testCtx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "one watcher", func() bool { return watchers() == 1 })
	w.Stop()
	eventually(t, "no watcher", func() bool { return watchers() == 0 })
}

// On the secure port /metrics is a non-resource path like any other: authenticated,
// then authorized.
func TestMetricsOnTheSecurePort(t *testing.T) {
	h := newSecureHarness(t)
	for _, tt := range []struct {
		name string
		set  func(*rest.Config)
		code int
	}{
		{"anonymous", func(*rest.Config) {}, http.StatusUnauthorized},
		{"thomas may read everything", func(c *rest.Config) { c.BearerToken = "thomas" }, http.StatusOK},
		{"bob may read pods in myNamespace only", func(c *rest.Config) { c.BearerToken = "s3cr3t-token" }, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &rest.Config{Host: h.url, TLSClientConfig: rest.TLSClientConfig{CAData: h.ca.CertPEM}}
			tt.set(cfg)
			client, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(h.url + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Fatalf("GET /metrics: %d, want %d", resp.StatusCode, tt.code)
			}
		})
	}
}
