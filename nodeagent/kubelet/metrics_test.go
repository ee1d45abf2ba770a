package kubelet

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/nodeagent/metrics"
)

// scrape reads one sample of the agent's /metrics, -1 when absent.
func scrape(m *metrics.Agent, sample string) float64 {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	match := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(body)
	if match == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(match[1]), 64)
	return v
}

// The agent reports its running pods and containers, each pod's start once, and its
// probes' results.
func TestAgentMetrics(t *testing.T) {
	m := metrics.New()
	_, cs := runMeasuredAgent(t, m)
	pods := cs.CoreV1().Pods("default")
	p := testPod("web", corev1.RestartPolicyAlways)
	p.CreationTimestamp = metav1.Now()
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{TimeoutSeconds: 1, PeriodSeconds: 1,
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	if _, err := pods.Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "one running pod with one container, its start measured", func() error {
		got := []float64{
			scrape(m, "kubelet_running_pods"),
			scrape(m, `kubelet_running_containers{container_state="running"}`),
			scrape(m, "kubelet_pod_start_duration_seconds_count"),
		}
		if got[0] != 1 || got[1] != 1 || got[2] != 1 {
			return fmt.Errorf("running pods, containers, starts = %v", got)
		}
		return nil
	})
	eventually(t, "the readiness probe's success counted", func() error { // the fake engine's exec exits 0
		if n := scrape(m, `prober_probe_total{probe_type="Readiness",result="successful"}`); n < 1 {
			return fmt.Errorf("successful readiness probes: %v", n)
		}
		return nil
	})
	if err := pods.Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no running pod", func() error {
		if n := scrape(m, "kubelet_running_pods"); n != 0 {
			return fmt.Errorf("running pods: %v", n)
		}
		return nil
	})
	if n := scrape(m, "kubelet_pod_start_duration_seconds_count"); n != 1 {
		t.Errorf("pod starts measured %v times, want once", n)
	}
}
