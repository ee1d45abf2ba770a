package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAgentMetrics(t *testing.T) {
	a := New()
	a.CountRunning(func() (int, int) { return 3, 5 })
	a.PodStarted(1500 * time.Millisecond)
	a.Probed("Liveness", true)
	a.Probed("Liveness", true)
	a.Probed("Readiness", false)
	a.ImagePulled(2*time.Second, nil)
	a.ImagePulled(time.Second, errors.New("no registry"))

	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		"kubelet_running_pods 3\n",
		`kubelet_running_containers{container_state="running"} 5` + "\n",
		`kubelet_pod_start_duration_seconds_bucket{le="2"} 1` + "\n",
		`kubelet_pod_start_duration_seconds_bucket{le="1"} 0` + "\n",
		`prober_probe_total{probe_type="Liveness",result="successful"} 2` + "\n",
		`prober_probe_total{probe_type="Readiness",result="failed"} 1` + "\n",
		"kubelet_image_pull_duration_seconds_count 1\n",
		"kubelet_image_pull_failures_total 1\n",
		"go_goroutines",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
}

// A nil *Agent measures nothing and does not fail.
func TestNilAgent(t *testing.T) {
	var a *Agent
	a.CountRunning(func() (int, int) { return 1, 1 })
	a.PodStarted(time.Second)
	a.Probed("Liveness", false)
	a.ImagePulled(time.Second, nil)
}
