package scheduler

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

// benchCluster is 5,000 nodes holding 30,000 pods of 100 services.
func benchCluster(b *testing.B) (*Cache, *corev1.Pod) {
	b.Helper()
	r := rand.New(rand.NewSource(1))
	c := NewCache()
	for i := 0; i < 5000; i++ {
		c.SetNode(st.NewNode(fmt.Sprintf("node-%04d", i)).CPU("32").Mem("128Gi").Pods(110).
			Labels("zone", fmt.Sprintf("z%d", i%3), "rack", fmt.Sprintf("r%d", i%50)).Obj())
	}
	for s := 0; s < 100; s++ {
		c.SetService(st.NewService(fmt.Sprintf("svc-%02d", s), "app", fmt.Sprintf("app-%02d", s)))
	}
	for i := 0; i < 30000; i++ {
		c.SetPod(st.NewPod(fmt.Sprintf("pod-%05d", i)).Labels("app", fmt.Sprintf("app-%02d", r.Intn(100))).
			CPU("250m").Mem("256Mi").Node(fmt.Sprintf("node-%04d", r.Intn(5000))).Obj())
	}
	return c, st.NewPod("new").Labels("app", "app-07").CPU("500m").Mem("512Mi").Obj()
}

// BenchmarkBid5000Nodes bids one pod on 5,000 nodes and decides, on one goroutine.
func BenchmarkBid5000Nodes(b *testing.B) {
	c, pod := benchCluster(b)
	policy := DefaultPolicy()
	r := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := c.Schedule(pod, &policy, r.Intn); d.Node == "" {
			b.Fatal("no node")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/5000, "ns/node")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}

// BenchmarkBid5000NodesTwoShards bids on two shards in parallel and merges, as two
// shard actors on two cores would.
func BenchmarkBid5000NodesTwoShards(b *testing.B) {
	c, pod := benchCluster(b)
	policy := DefaultPolicy()
	shards := c.Shards(2)
	bufs := make([][]Bid, len(shards))
	decisions := make([]Decision, len(shards))
	r := rand.New(rand.NewSource(1))
	rs := []*rand.Rand{rand.New(rand.NewSource(2)), rand.New(rand.NewSource(3))}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx := c.Context(pod, &policy)
		var wg sync.WaitGroup
		for s := range shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bufs[s] = policy.BidNodes(pod, shards[s], ctx, bufs[s][:0])
				decisions[s] = Decide(pod, bufs[s], rs[s].Intn)
			}()
		}
		wg.Wait()
		if d := Merge(decisions[0], decisions[1], r.Intn); d.Node == "" {
			b.Fatal("no node")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}

// BenchmarkShardStream5000Nodes decides and assumes a stream of identical pods of
// one service on 5,000 empty nodes with two incremental Shards, one after the other
// on one goroutine: the scheduler's core work per pod, without messages.
func BenchmarkShardStream5000Nodes(b *testing.B) {
	c := NewCache()
	for i := 0; i < 5000; i++ {
		c.SetNode(st.NewNode(fmt.Sprintf("node-%04d", i)).CPU("32").Mem("128Gi").Pods(110).Obj())
	}
	c.SetService(st.NewService("web", "app", "web"))
	policy := DefaultPolicy()
	h := newIncremental(c, &policy, 2)
	r := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pod := st.NewPod(fmt.Sprintf("web-%d", i)).Labels("app", "web").CPU("100m").Mem("128Mi").Obj()
		d := h.decide(pod, r.Intn)
		if d.Node == "" {
			b.Fatal("no node")
		}
		if err := c.Assume(pod, d.Node, t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}

// BenchmarkShardStreamManyRCs is BenchmarkShardStream5000Nodes with the pods of 179
// replication controllers (the envelope's count at 150,000 pods) arriving in turn, as
// RCs scaling up together create them: each RC is its own spread group, so its own
// pod class.
func BenchmarkShardStreamManyRCs(b *testing.B) {
	const rcs = 179
	c := NewCache()
	for i := 0; i < 5000; i++ {
		c.SetNode(st.NewNode(fmt.Sprintf("node-%04d", i)).CPU("32").Mem("128Gi").Pods(110).Obj())
	}
	for i := 0; i < rcs; i++ {
		c.SetController(st.NewRC(fmt.Sprintf("rc-%03d", i), "app", fmt.Sprintf("rc-%03d", i)))
	}
	policy := DefaultPolicy()
	h := newIncremental(c, &policy, 1)
	r := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		app := fmt.Sprintf("rc-%03d", i%rcs)
		pod := st.NewPod(fmt.Sprintf("%s-%d", app, i)).Labels("app", app).CPU("10m").Mem("16Mi").Obj()
		d := h.decide(pod, r.Intn)
		if d.Node == "" {
			b.Fatal("no node")
		}
		if err := c.Assume(pod, d.Node, t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}
