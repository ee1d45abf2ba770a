package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkDockerPodStartupTracing measures what the agent's tracing costs a pod's
// startup on the Docker agent (from the create request to the first status with
// every container running, image present): two nodes, each with its own server
// (both sampling every trace), one agent with --tracing and one without, taking turns
// (KUBEACTOR_BENCH_ROUNDS rounds, 2 by default, of 10 pods one at a time on each),
// so that the load of a shared machine falls on both alike. Run with -benchtime 1x.
func BenchmarkDockerPodStartupTracing(b *testing.B) {
	requireDocker(b)
	rounds := 2
	if n, err := strconv.Atoi(os.Getenv("KUBEACTOR_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	quiet := []string{"--read-only-port", "0", "--healthz-port", "0"}
	modes := []struct {
		name string
		node *dockerNode
	}{
		{"off", startDockerNode(b, append([]string{"--tracing=false"}, quiet...)...)},
		{"on", startDockerNode(b, append([]string{"--tracing", "--trace-sampling", "1"}, quiet...)...)},
	}
	for i := 0; i < b.N; i++ {
		got := make([][]time.Duration, len(modes))
		for r := 0; r < rounds; r++ {
			for m, mode := range modes {
				seen := mode.node.watchRunning(b)
				for j := 0; j < 10; j++ {
					name := fmt.Sprintf("tr-%d-%d-%d", i, r, j)
					start := time.Now()
					mode.node.createPod(b, name)
					got[m] = append(got[m], (<-seen.wait(name)).Sub(start))
				}
			}
		}
		for m, mode := range modes {
			sort.Slice(got[m], func(x, y int) bool { return got[m][x] < got[m][y] })
			b.ReportMetric(ms(percentile(got[m], 0.5)), "tracing-"+mode.name+"-p50-ms")
			b.ReportMetric(ms(percentile(got[m], 0.9)), "tracing-"+mode.name+"-p90-ms")
		}
		for _, mode := range modes {
			n := mode.node
			zero := int64(0)
			_ = n.cs.CoreV1().Pods("default").DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
			Eventually(b, 120*time.Second, "pods removed", func() error {
				if names := n.dockerPS(true); len(names) > 0 {
					return fmt.Errorf("%d containers left", len(names))
				}
				return nil
			})
		}
	}
}
