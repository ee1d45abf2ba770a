package actors

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/node"
	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// BenchmarkScheduleThroughput stores 5,000 Ready nodes, a service and 30,000 pending
// pods of it, starts the system with the scheduler and measures until every pod's
// binding is persisted: the scheduler alone, writing no Scheduled events
// (Options.SchedulerQuiet). Run with -benchtime 1x.
func BenchmarkScheduleThroughput(b *testing.B) { benchmarkSchedule(b, false, nil) }

// BenchmarkScheduleThroughputScheduledEvents is BenchmarkScheduleThroughput with a
// Scheduled event per bound pod (the default), through the scheduler's event budget.
func BenchmarkScheduleThroughputScheduledEvents(b *testing.B) { benchmarkSchedule(b, true, nil) }

func benchmarkSchedule(b *testing.B, scheduledEvents bool, tracer *tracing.Tracer) {
	benchmarkScheduleSize(b, 5000, 30000, scheduledEvents, tracer)
}

// quietNodes keeps the node controller from marking the benchmarks' nodes, which post
// no heartbeats, Unknown 40 seconds after the start (--node-monitor-grace-period): on a
// busy machine scheduling 30,000 pods takes longer than that, and the pods left then
// fit nowhere, so that the benchmark waited for its timeout.
var quietNodes = node.Config{MonitorGracePeriod: time.Hour, StartupGracePeriod: time.Hour}

// benchmarkScheduleSize stores nodes Ready nodes, a service and pods pending pods of
// it, starts the system with the scheduler and measures until every pod's binding is
// persisted.
func benchmarkScheduleSize(b *testing.B, nodes, pods int, scheduledEvents bool, tracer *tracing.Tracer) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		store := openStore(b)
		var cmds []persistence.Command
		flush := func() {
			if len(cmds) == 0 {
				return
			}
			if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
				b.Fatal(err)
			}
			cmds = cmds[:0]
		}
		for n := 0; n < nodes; n++ {
			node := st.NewNode(fmt.Sprintf("sim-%04d", n)).CPU("32").Mem("128Gi").Pods(110).Obj()
			node.UID = types.UID(node.Name)
			cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: persistence.Key{Resource: "nodes", Name: node.Name}, Object: node})
		}
		svc := st.NewService("web", "app", "web")
		svc.UID = "svc-web"
		cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: persistence.Key{Resource: "services", Namespace: "default", Name: "web"}, Object: svc})
		flush()
		for p := 0; p < pods; p++ {
			pod := st.NewPod(fmt.Sprintf("web-%05d", p)).Labels("app", "web").CPU("100m").Mem("128Mi").Obj()
			pod.UID = types.UID(pod.Name)
			cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("default", pod.Name), Object: pod})
			if len(cmds) == 1000 {
				flush()
			}
		}
		flush()
		w, err := store.Watch(context.Background(), "pods", "", store.Revision())
		if err != nil {
			b.Fatal(err)
		}
		perNode := make(map[string]int, nodes)
		done := make(chan struct{})
		var bound atomic.Int64
		go func() {
			defer close(done)
			for bound.Load() < int64(pods) {
				evs, err := w.Next(context.Background())
				if err != nil {
					return
				}
				for _, ev := range evs {
					if p := ev.Item.Object().(*corev1.Pod); p.Spec.NodeName != "" && ev.Type == persistence.Modified {
						perNode[p.Spec.NodeName]++
						bound.Add(1)
					}
				}
			}
		}()
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime(b)
		s, err := Start(Options{Store: store, Log: quietLog(), RequestTimeout: time.Minute, Resources: testResources,
			Scheduler: true, SchedulerShards: 1, SchedulerSeed: 1, SchedulerQuiet: !scheduledEvents, Tracer: tracer,
			Nodes: NodeOptions{Config: quietNodes}})
		if err != nil {
			b.Fatal(err)
		}
		started := time.Since(start)
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			b.Fatalf("%d of %d pods bound within 5 minutes (scheduler: %+v)", bound.Load(), pods, *s.Stats().Scheduler)
		}
		elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
		b.StopTimer()
		s.Stop()
		lo, hi := pods, 0
		for n := 0; n < nodes; n++ {
			c := perNode[fmt.Sprintf("sim-%04d", n)]
			lo, hi = min(lo, c), max(hi, c)
		}
		b.ReportMetric(float64(pods)/elapsed.Seconds(), "pods/s")
		b.ReportMetric(float64(pods)/(elapsed-started).Seconds(), "pods/s-after-start")
		b.ReportMetric(float64(pods)/cpu.Seconds(), "pods/cpu-s")
		b.ReportMetric(float64(hi-lo), "spread")
	}
}

// cpuTime is the CPU time the process used so far, user and system, every thread. A
// run's pods per CPU second depends less on what else the machine runs than its pods
// per second.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
