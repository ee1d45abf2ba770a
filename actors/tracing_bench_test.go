package actors

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/kubeactor/kubeactor/tracing"
)

// BenchmarkScheduleTracing is the scheduling throughput benchmark with tracing off,
// sampling 1% and sampling everything, alternating: round r runs each mode once
// (KUBEACTOR_BENCH_ROUNDS rounds, 2 by default). Run with -benchtime 1x.
//
// It schedules 30,000 pods on 5,000 nodes (BenchmarkScheduleThroughput's size, the
// issue's 30,000-pod benchmark), so `make bench` has the three modes at full size;
// KUBEACTOR_BENCH_SIZE=NODESxPODS changes that (1000x10000 for a quicker look).
func BenchmarkScheduleTracing(b *testing.B) {
	rounds := 2
	if n, err := strconv.Atoi(os.Getenv("KUBEACTOR_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	nodes, pods := 5000, 30000
	if v := os.Getenv("KUBEACTOR_BENCH_SIZE"); v != "" {
		if _, err := fmt.Sscanf(v, "%dx%d", &nodes, &pods); err != nil || nodes <= 0 || pods <= 0 {
			b.Fatalf("KUBEACTOR_BENCH_SIZE=%q: want NODESxPODS, for example 1000x10000", v)
		}
	}
	for r := 1; r <= rounds; r++ {
		for _, m := range tracingModes {
			b.Run(fmt.Sprintf("%s/round-%d", m.name, r), func(b *testing.B) {
				benchmarkScheduleSize(b, nodes, pods, false, m.tracer(b))
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
