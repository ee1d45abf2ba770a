package actors

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/kubeactor/kubeactor/tracing"
)

// BenchmarkScheduleTracing is BenchmarkScheduleThroughput with tracing off, sampling
// 1% and sampling everything, alternating: round r runs each mode once
// (KUBEACTOR_BENCH_ROUNDS rounds, 2 by default). Run with -benchtime 1x.
func BenchmarkScheduleTracing(b *testing.B) {
	rounds := 2
	if n, err := strconv.Atoi(os.Getenv("KUBEACTOR_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	for r := 1; r <= rounds; r++ {
		for _, m := range tracingModes {
			b.Run(fmt.Sprintf("%s/round-%d", m.name, r), func(b *testing.B) {
				benchmarkSchedule(b, false, m.tracer(b))
			})
		}
	}
}

var tracingModes = []struct {
	name   string
	tracer func(testing.TB) *tracing.Tracer
}{
	{"off", func(testing.TB) *tracing.Tracer { return nil }},
	{"sampled-1pct", func(t testing.TB) *tracing.Tracer { return newBenchTracer(t, 0.01) }},
	{"sampled-all", func(t testing.TB) *tracing.Tracer { return newBenchTracer(t, 1) }},
}

func newBenchTracer(t testing.TB, ratio float64) *tracing.Tracer {
	tr, err := tracing.New(tracing.Options{Sampling: ratio})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
