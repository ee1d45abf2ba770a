package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const metricsRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: scraped
spec:
  replicas: 3
  selector:
    app: scraped
  template:
    metadata:
      labels:
        app: scraped
    spec:
      containers:
      - name: web
        image: kubeactor/testserver
---
apiVersion: v1
kind: Pod
metadata:
  name: solo
spec:
  containers:
  - name: web
    image: kubeactor/testserver
`

// metricsPods is how many pods metricsRC makes: the RC's three, and one created
// through the API (the RC's actor creates its pods without an API request).
const metricsPods = 4

// TestMetricsScrapedByPrometheus runs a real Prometheus (Debian's prometheus
// package) scraping the server's and a simulated agent's /metrics every second, and
// asks it, over its HTTP API, what they say once an RC's pods and one more run.
func TestMetricsScrapedByPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("skipped: the prometheus binary is not installed (apt-get install prometheus): %v", err)
	}
	s := StartServer(t, "")
	agentPort := freePort(t)
	startAgent(t, s, "--simulate", "2", "--name-prefix", "prom", "--node-status-update-frequency", "1s",
		"--address", "127.0.0.1", "--read-only-port", strconv.Itoa(agentPort))
	Eventually(t, 30*time.Second, "the agent's /metrics", func() error {
		return getOK(fmt.Sprintf("http://127.0.0.1:%d/metrics", agentPort))
	})

	prom := startPrometheus(t, bin, strings.TrimPrefix(s.URL, "http://"), fmt.Sprintf("127.0.0.1:%d", agentPort))
	s.MustKubectl(t, metricsRC, "create", "-f", "-")

	checks := []struct {
		what, query string
		ok          func(float64) bool
	}{
		{"both targets up", `sum(up{job=~"kubeactor-.*"})`, func(v float64) bool { return v == 2 }},
		{"pods created through the API", `sum(apiserver_request_total{verb="POST",resource="pods"})`, func(v float64) bool { return v > 0 }},
		{"pods scheduled", `sum(scheduler_schedule_attempts_total{result="scheduled"})`, func(v float64) bool { return v >= metricsPods }},
		{"pods stored", `apiserver_storage_objects{resource="pods"}`, func(v float64) bool { return v == metricsPods }},
		{"pods running on the agent", `kubelet_running_pods{job="kubeactor-agent"}`, func(v float64) bool { return v == metricsPods }},
		{"pods' starts measured", `kubelet_pod_start_duration_seconds_count{job="kubeactor-agent"}`, func(v float64) bool { return v >= metricsPods }},
		{"pod statuses updated by the agent", `sum(apiserver_request_total{verb="PUT",resource="pods",subresource="status"})`, func(v float64) bool { return v >= metricsPods }},
		{"pod actors' messages", `kubeactor_actor_messages_total{kind="pods"}`, func(v float64) bool { return v > 0 }},
		{"store fsyncs timed", `kubeactor_store_fsync_duration_seconds_count`, func(v float64) bool { return v > 0 }},
		// The rest of the names: each has a sample, and counts what it should.
		{"pod creates' latency", `sum(apiserver_request_duration_seconds_count{verb="POST",resource="pods"})`, func(v float64) bool { return v > 0 }},
		{"open watches", `sum(apiserver_registered_watchers)`, func(v float64) bool { return v > 0 }},
		{"store applies timed", `sum(kubeactor_store_apply_duration_seconds_count)`, func(v float64) bool { return v > 0 }},
		{"scheduling attempts timed", `scheduler_scheduling_attempt_duration_seconds_count`, func(v float64) bool { return v >= metricsPods }},
		{"pending pods", `scheduler_pending_pods`, func(v float64) bool { return v >= 0 }},
		{"no Scheduled event dropped for a few pods", `kubeactor_scheduler_events_dropped_total`, func(v float64) bool { return v == 0 }},
		{"pod actors' mailbox depth", `kubeactor_actor_mailbox_depth{kind="pods"}`, func(v float64) bool { return v >= 0 }},
		{"pod actors' handling time", `kubeactor_actor_handling_seconds_count{kind="pods"}`, func(v float64) bool { return v > 0 }},
		{"pod actors' restarts", `kubeactor_actor_restarts_total{kind="pods"}`, func(v float64) bool { return v >= 0 }},
		{"containers running on the agent", `sum(kubelet_running_containers{job="kubeactor-agent"})`, func(v float64) bool { return v >= metricsPods }},
	}
	for _, c := range checks {
		Eventually(t, 60*time.Second, c.what, func() error {
			v, err := prom.query(c.query)
			if err != nil {
				return err
			}
			if !c.ok(v) {
				return fmt.Errorf("%s = %v", c.query, v)
			}
			return nil
		})
	}
}

// promServer is a running Prometheus server.
type promServer struct {
	url string
}

// startPrometheus runs bin scraping the /metrics of targets every second, with its
// data in a temporary directory, on a free loopback port; it is stopped at cleanup.
func startPrometheus(t *testing.T, bin, server, agent string) *promServer {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
- job_name: kubeactor-server
  static_configs:
  - targets: [%q]
- job_name: kubeactor-agent
  static_configs:
  - targets: [%q]
`, server, agent)
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--config.file="+file, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	var out lockedOutput
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus log:\n%s", out.String())
		}
	})
	p := &promServer{url: "http://" + addr}
	Eventually(t, 30*time.Second, "prometheus ready", func() error {
		select {
		case <-done:
			t.Fatalf("prometheus exited:\n%s", out.String())
		default:
		}
		return getOK(p.url + "/-/ready")
	})
	return p
}

// query evaluates an instant query and returns the sum of the vector's samples; an
// empty vector is an error (nothing reported yet).
func (p *promServer) query(q string) (float64, error) {
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("query %s: %w", q, err)
	}
	if body.Status != "success" || body.Data.ResultType != "vector" {
		return 0, fmt.Errorf("query %s: %s %s (%s)", q, body.Status, body.Error, body.Data.ResultType)
	}
	if len(body.Data.Result) == 0 {
		return 0, fmt.Errorf("query %s: no sample yet", q)
	}
	var sum float64
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("query %s: value %v: %w", q, r.Value[1], err)
		}
		sum += v
	}
	return sum, nil
}

// getOK tells whether a GET of u answers 200.
func getOK(u string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return nil
}

// lockedOutput collects a process's output.
type lockedOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedOutput) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
