package gateway

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/kubeactor/kubeactor/tracing"
)

// BenchmarkCreatePodsTracing is BenchmarkCreatePods with tracing off, sampling 1%
// and sampling everything, alternating: round r runs each mode once
// (KUBEACTOR_BENCH_ROUNDS rounds, 2 by default), so that the load of a shared
// machine falls on every mode alike.
func BenchmarkCreatePodsTracing(b *testing.B) {
	for r := 1; r <= benchRounds(); r++ {
		for _, m := range []struct {
			name  string
			ratio float64
		}{{"off", -1}, {"sampled-1pct", 0.01}, {"sampled-all", 1}} {
			b.Run(fmt.Sprintf("%s/round-%d", m.name, r), func(b *testing.B) {
				var o harnessOptions
				if m.ratio >= 0 {
					tr, err := tracing.New(tracing.Options{Sampling: m.ratio})
					if err != nil {
						b.Fatal(err)
					}
					o.tracer = tr
				}
				benchCreatePods(b, o)
			})
		}
	}
}

func benchRounds() int {
	if n, err := strconv.Atoi(os.Getenv("KUBEACTOR_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 2
}
