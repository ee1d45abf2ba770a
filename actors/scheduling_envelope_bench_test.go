package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/internal/testenv"
	"github.com/kubeactor/kubeactor/persistence"
)

// envelopeRCSizes splits pods into the envelope's RCs (e2e BenchmarkEnvelope): sizes
// cycle 5,000, 2,000, 1,000, 500, 200, 100, 50, 20, 10, 5, 1, largest first.
func envelopeRCSizes(pods int) []int {
	cycle := []int{5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 1}
	var out []int
	for left, i := 0, 0; left < pods; i++ {
		n := min(cycle[i%len(cycle)], pods-left)
		out = append(out, n)
		left += n
	}
	return out
}

// BenchmarkScheduleEnvelopeRCs is the envelope's build in process: Ready nodes (2,000
// by default, KUBEACTOR_BENCH_NODES), then replication controllers in the envelope's
// sizes for 60,000 pods (KUBEACTOR_BENCH_PODS) over five namespaces, created through
// the system once it runs, so that their pods arrive interleaved as the RCs create
// them and each RC is a spread group of its own. It measures until every pod is
// created and until every pod's binding is persisted, and prints the figures as one
// JSON line too. Run with -benchtime 1x.
func BenchmarkScheduleEnvelopeRCs(b *testing.B) {
	nodes := testenv.PositiveInt(b, "KUBEACTOR_BENCH_NODES", 2000)
	pods := testenv.PositiveInt(b, "KUBEACTOR_BENCH_PODS", 60000)
	const namespaces = 5
	sizes := envelopeRCSizes(pods)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		store := openStore(b)
		var cmds []persistence.Command
		for n := 0; n < nodes; n++ {
			node := st.NewNode(fmt.Sprintf("sim-%04d", n)).CPU("32").Mem("128Gi").Pods(110).Obj()
			node.UID = types.UID(node.Name)
			cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: persistence.Key{Resource: "nodes", Name: node.Name}, Object: node})
		}
		for n := range namespaces {
			ns := nsObj(fmt.Sprintf("env-%d", n))
			cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: persistence.Key{Resource: "namespaces", Name: ns.Name}, Object: ns})
		}
		if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
			b.Fatal(err)
		}
		w, err := store.Watch(context.Background(), "pods", "", store.Revision())
		if err != nil {
			b.Fatal(err)
		}
		var created, bound atomic.Int64
		var lastCreated atomic.Int64 // nanoseconds since start
		done := make(chan struct{})
		seen := make(map[string]bool, pods)
		var start time.Time
		go func() {
			defer close(done)
			for bound.Load() < int64(pods) {
				evs, err := w.Next(context.Background())
				if err != nil {
					return
				}
				for _, ev := range evs {
					p := ev.Item.Object().(*corev1.Pod)
					switch {
					case ev.Type == persistence.Added:
						if created.Add(1) == int64(pods) {
							lastCreated.Store(int64(time.Since(start)))
						}
					case p.Spec.NodeName != "" && !seen[p.Namespace+"/"+p.Name]:
						seen[p.Namespace+"/"+p.Name] = true
						bound.Add(1)
					}
				}
			}
		}()
		b.StartTimer()
		start = time.Now()
		cpu0 := cpuTime(b)
		s, err := Start(Options{Store: store, Log: quietLog(), RequestTimeout: time.Minute, Resources: testResources,
			Scheduler: true, SchedulerShards: 1, SchedulerSeed: 1, Nodes: NodeOptions{Config: quietNodes}})
		if err != nil {
			b.Fatal(err)
		}
		for j, size := range sizes {
			ns, name := fmt.Sprintf("env-%d", j%namespaces), fmt.Sprintf("rc%d", j)
			rc := newRC(ns, name, int32(size))
			rc.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
			if _, err := s.Create(context.Background(), rcKey(ns, name), rc); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-done:
		case <-time.After(15 * time.Minute):
			b.Fatalf("%d created, %d of %d pods bound within 15 minutes (scheduler: %+v)", created.Load(), bound.Load(), pods, *s.Stats().Scheduler)
		}
		elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
		b.StopTimer()
		s.Stop()
		toCreated := time.Duration(lastCreated.Load())
		fig := map[string]float64{
			"nodes": float64(nodes), "pods": float64(pods), "rcs": float64(len(sizes)),
			"created-s": toCreated.Seconds(), "bound-s": elapsed.Seconds(),
			"pods/s": float64(pods) / elapsed.Seconds(), "pods/cpu-s": float64(pods) / cpu.Seconds(),
			"bound/created": toCreated.Seconds() / elapsed.Seconds(),
		}
		out, _ := json.Marshal(fig)
		fmt.Println(string(out))
		b.ReportMetric(fig["pods/s"], "pods/s")
		b.ReportMetric(fig["pods/cpu-s"], "pods/cpu-s")
		b.ReportMetric(fig["created-s"], "created-s")
		b.ReportMetric(fig["bound-s"], "bound-s")
	}
}
