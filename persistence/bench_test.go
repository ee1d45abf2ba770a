package persistence

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// BenchmarkDurableCreates64 measures durable (fsync'd) pod creates with 64 concurrent
// writers on a real directory.
func BenchmarkDurableCreates64(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), NewObject: newObject})
	if err != nil {
		b.Fatal(err)
	}
	defer closeStore(b, s)
	const writers = 64
	var next atomic.Int64
	lat := make([][]time.Duration, writers)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				t0 := time.Now()
				if _, _, err := s.Apply(context.Background(), create("default", fmt.Sprintf("pod-%d", i))); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(b.N)/el.Seconds(), "creates/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkRawSyncedBatch is the floor's counterpart: one goroutine, one Set and one
// fsync per batch of a pod-sized value, straight on Pebble.
func BenchmarkRawSyncedBatch(b *testing.B) {
	db, err := pebble.Open(b.TempDir(), &pebble.Options{FS: vfs.Default})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	val := make([]byte, 1500)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		batch := db.NewBatch()
		_ = batch.Set([]byte(fmt.Sprintf("k%09d", i)), val, nil)
		if err := batch.Commit(pebble.Sync); err != nil {
			b.Fatal(err)
		}
		batch.Close()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "batches/s")
}

// BenchmarkList30k lists 30,000 pods the way the gateway does: a snapshot, then
// Ascend concatenating each item's JSON.
func BenchmarkList30k(b *testing.B) {
	s := openMem(b, nil, 0)
	defer closeStore(b, s)
	fill(b, s, 30000)
	buf := make([]byte, 0, 64<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = buf[:0]
		n := 0
		sn := s.Snapshot("pods")
		sn.Ascend("", "", func(it *Item) bool {
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, it.JSON()...)
			n++
			return true
		})
		if n != 30000 {
			b.Fatalf("listed %d", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/list")
	b.ReportMetric(float64(len(buf))/(1<<20), "MB/list")
}

// fill creates n pods in transactions of 100.
func fill(tb testing.TB, s *Store, n int) {
	tb.Helper()
	for i := 0; i < n; i += 100 {
		cmds := make([]Command, 0, 100)
		for j := i; j < min(n, i+100); j++ {
			cmds = append(cmds, create(fmt.Sprintf("ns-%d", j%10), fmt.Sprintf("pod-%05d", j)))
		}
		if _, _, err := s.Apply(context.Background(), cmds...); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkWatchFanout has 1,000 watchers of all pods while one writer makes 1,000
// durable writes per second; every watcher must get every event. It reports the
// delivery latency from the start of Apply to each watcher's receipt.
func BenchmarkWatchFanout(b *testing.B) {
	const watchers = 1000
	s, err := Open(Options{Dir: b.TempDir(), NewObject: newObject})
	if err != nil {
		b.Fatal(err)
	}
	defer closeStore(b, s)
	var started sync.Map // pod name -> time.Time
	lat := make([][]time.Duration, watchers)
	c, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := range watchers {
		w, err := s.Watch(c, "pods", "", s.Revision())
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for got := 0; got < b.N; {
				evs, err := w.Next(c)
				if err != nil {
					b.Error(err)
					return
				}
				at := time.Now()
				for _, ev := range evs {
					t0, _ := started.Load(ev.Item.Key.Name)
					lat[i] = append(lat[i], at.Sub(t0.(time.Time)))
				}
				got += len(evs)
			}
		}()
	}
	b.ResetTimer()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var writes sync.WaitGroup
	for i := 0; i < b.N; i++ {
		<-tick.C // writes are offered at 1,000/s, each by its own client
		writes.Add(1)
		go func() {
			defer writes.Done()
			name := fmt.Sprintf("pod-%d", i)
			started.Store(name, time.Now())
			if _, _, err := s.Apply(c, create("default", name)); err != nil {
				b.Error(err)
			}
		}()
	}
	writes.Wait()
	wg.Wait()
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) != watchers*b.N {
		b.Fatalf("delivered %d events, want %d", len(all), watchers*b.N)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkOpen30k measures loading a store of 30,000 pods (and their change log).
func BenchmarkOpen30k(b *testing.B) {
	fs := vfs.NewMem()
	s := openMem(b, fs, 0)
	fill(b, s, 30000)
	closeStore(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := openMem(b, fs, 0)
		b.StopTimer()
		closeStore(b, s)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
}
