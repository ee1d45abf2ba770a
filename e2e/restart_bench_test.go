package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/internal/testenv"
)

// BenchmarkRestartEnvelope times restarts of the server on the envelope's state: it
// builds the state once into KUBEACTOR_RESTART_DATA (a directory kept between runs;
// a temporary one when unset) the way BenchmarkEnvelope does (KUBEACTOR_ENVELOPE_NODES
// simulated nodes, KUBEACTOR_ENVELOPE_PODS pods in RCs until every pod is Running),
// kills the server and the agent with SIGKILL and marks the directory built. Then,
// KUBEACTOR_RESTART_ROUNDS times (3 by default), it starts each binary of
// KUBEACTOR_RESTART_BINS (comma-separated; KUBEACTOR_BIN when unset) in turn on that
// data and times exec → /readyz 200 → a pod create answering 201 (and reads the
// server's CPU seconds by then, which a loaded machine moves much less than the wall
// time), checks the list of every pod, deletes its probe pod and kills the server
// again (SIGTERM instead when profiling, so that the profile is written). Extra server flags come
// from KUBEACTOR_RESTART_ARGS (space-separated; "{n}" is replaced by the restart's
// number, for a profile file per restart). Restarts run without the agent: the
// envelope's agent follows the old server's port, which a restart does not keep.
func BenchmarkRestartEnvelope(b *testing.B) {
	nodes := testenv.PositiveInt(b, "KUBEACTOR_ENVELOPE_NODES", 5000)
	pods := testenv.PositiveInt(b, "KUBEACTOR_ENVELOPE_PODS", 150000)
	rounds := testenv.PositiveInt(b, "KUBEACTOR_RESTART_ROUNDS", 3)
	dataDir := os.Getenv("KUBEACTOR_RESTART_DATA")
	if dataDir == "" {
		dataDir = b.TempDir()
	}
	bins := []string{Binary(b)}
	if v := os.Getenv("KUBEACTOR_RESTART_BINS"); v != "" {
		bins = strings.Split(v, ",")
	}
	var extra []string
	if v := os.Getenv("KUBEACTOR_RESTART_ARGS"); v != "" {
		extra = strings.Fields(v)
	}
	marker := filepath.Join(dataDir, "restart-envelope-built")
	if _, err := os.Stat(marker); err != nil {
		buildKept(b, dataDir, nodes, pods)
		if err := os.WriteFile(marker, []byte(fmt.Sprintf("%d nodes, %d pods\n", nodes, pods)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < b.N; i++ {
		times := make([][]time.Duration, len(bins))
		cpus := make([]float64, len(bins))
		n := 0
		for range rounds {
			for j, bin := range bins {
				n++
				args := make([]string, len(extra))
				for k, a := range extra {
					args[k] = strings.ReplaceAll(a, "{n}", strconv.Itoa(n))
				}
				d, cpu := timeRestart(b, bin, dataDir, pods, n, args)
				times[j], cpus[j] = append(times[j], d), cpus[j]+cpu
				b.Logf("restart %d, %s: %.2f s, %.2f CPU s", n, bin, d.Seconds(), cpu)
			}
		}
		for j, bin := range bins {
			var sum time.Duration
			for _, d := range times[j] {
				sum += d
			}
			mean := sum / time.Duration(len(times[j]))
			cpu := cpus[j] / float64(len(times[j]))
			b.Logf("%s: mean %.2f s, %.2f CPU s over %d restarts", bin, mean.Seconds(), cpu, len(times[j]))
			b.ReportMetric(mean.Seconds(), fmt.Sprintf("restart-s-bin%d", j))
			b.ReportMetric(cpu, fmt.Sprintf("restart-cpu-s-bin%d", j))
		}
	}
}

// buildKept builds the envelope on dataDir, every pod Running, then kills the server
// and the agent. The build's server tolerates heartbeats late by minutes: on a loaded
// machine they queue behind the pod writes, and nodes marked NotReady would be
// evicted.
func buildKept(b *testing.B, dataDir string, nodes, pods int) {
	b.Helper()
	s, agent, _, start := buildEnvelope(b, dataDir, nodes, pods, "--node-monitor-grace-period", "5m")
	b.Logf("built %d nodes, %d pods Running in %.1f s", nodes, pods, time.Since(start).Seconds())
	s.Kill()
	agent.Kill()
}

// timeRestart starts bin on dataDir and returns the time from exec until /readyz
// answers 200 and a pod create answers 201, and the server's CPU seconds by then; it checks that every pod is listed,
// deletes the probe pod and kills the server.
func timeRestart(b *testing.B, bin, dataDir string, pods, n int, extra []string) (time.Duration, float64) {
	b.Helper()
	b.Setenv("KUBEACTOR_BIN", bin)
	r0 := time.Now()
	s, err := launch(b, "server", dataDir, extra...)
	if err != nil {
		b.Fatal(err)
	}
	served := time.Since(r0)
	name := fmt.Sprintf("restart-probe-%d-%d", time.Now().UnixNano(), n)
	readyAt := served + untilServing(b, s, name)
	took := time.Since(r0)
	// The server's CPU time until then: on a shared machine the wall time follows
	// the load, the work done to get ready much less.
	cpu := cpuSeconds(b, s.cmd.Process.Pid)
	b.Logf("restart %d: serving after %.2f s, /readyz 200 after %.2f s, pod created after %.2f s, %.2f CPU s", n, served.Seconds(), readyAt.Seconds(), took.Seconds(), cpu)
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := getJSON(s.URL+"/api/v1/pods", &list); err != nil || len(list.Items) != pods+1 {
		b.Fatalf("list after restart: %d pods, want %d: %v", len(list.Items), pods+1, err)
	}
	cs := clientset(b, s)
	zero := int64(0)
	if err := cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		b.Fatal(err)
	}
	Eventually(b, time.Minute, "probe pod gone", func() error {
		if _, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("pod %s still there", name)
		}
		return nil
	})
	for _, line := range strings.Split(s.Logs(), "\n") {
		if strings.Contains(line, `"msg":"serving"`) {
			b.Logf("restart %d: %s", n, line)
		}
	}
	if slices.ContainsFunc(extra, func(a string) bool { return strings.HasPrefix(a, "--startup-cpu-profile") }) {
		s.Stop() // the profile is written on the way out
		return took, cpu
	}
	s.Kill()
	return took, cpu
}
