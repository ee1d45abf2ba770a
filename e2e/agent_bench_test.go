package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cpuSeconds is the user+system CPU time pid has used.
func cpuSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: utime and stime are
	// the 12th and 13th, in clock ticks (100 per second on Linux).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

// BenchmarkAgent5000Nodes measures what 5,000 simulated nodes cost: the time to
// register them, the agent's memory and CPU while it posts their heartbeats (10s
// period, 500 writes/s), and how fast it starts one pod on each node. Run with
// -bench Agent5000 -benchtime 1x.
func BenchmarkAgent5000Nodes(b *testing.B) {
	const nodes = 5000
	for range b.N {
		s := StartServer(b, "")
		cs := clientset(b, s)
		ctx := context.Background()
		start := time.Now()
		a := startAgent(b, s, "--simulate", strconv.Itoa(nodes), "--name-prefix", "bench", "--stats-interval", "0")
		Eventually(b, 120*time.Second, "nodes registered", func() error {
			l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) != nodes {
				return fmt.Errorf("%d nodes", len(l.Items))
			}
			return nil
		})
		registered := time.Since(start)

		// Steady state: one full heartbeat round after the first.
		<-time.After(10 * time.Second)
		pid := a.cmd.Process.Pid
		cpu0, t0 := cpuSeconds(b, pid), time.Now()
		<-time.After(20 * time.Second)
		cores := (cpuSeconds(b, pid) - cpu0) / time.Since(t0).Seconds()
		rss := rssBytes(b, pid) / (1 << 20)

		// One pod per node, created from 32 clients.
		start = time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < nodes; i = int(next.Add(1)) - 1 {
					p := testPod(fmt.Sprintf("bench-%d", i))
					p.Spec.NodeName = fmt.Sprintf("bench-%d", i)
					if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
						b.Errorf("create: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		Eventually(b, 120*time.Second, "pods running", func() error {
			l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=" + string(corev1.PodRunning)})
			if err != nil {
				return err
			}
			if len(l.Items) != nodes {
				return fmt.Errorf("%d running", len(l.Items))
			}
			return nil
		})
		podsTook := time.Since(start)

		b.ReportMetric(registered.Seconds(), "register-s")
		b.ReportMetric(rss, "agent-rss-MiB")
		b.ReportMetric(cores, "agent-cores")
		b.ReportMetric(float64(nodes)/podsTook.Seconds(), "pods-running/s")
		a.Stop(b)
		s.Stop()
	}
}
