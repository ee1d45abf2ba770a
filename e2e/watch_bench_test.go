package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkWatchFanout runs the real binary with 1,000 pod watchers while pods are
// created at 1,000/s, and reports whether every watcher got every event and the
// delivery latency (from the create request being sent to the event being read).
// As in the create benchmarks, the pods name a scheduler that does not exist: the
// writes are the 1,000 pod creates a second and nothing else (with no nodes, the
// scheduler would add a FailedScheduling event and its retries for every pod).
func BenchmarkWatchFanout(b *testing.B) {
	const (
		watchers = 1000
		rate     = 1000 // creates per second
		seconds  = 3
		events   = rate * seconds
	)
	for i := 0; i < b.N; i++ {
		s := StartServer(b, "")
		sent := make([]atomic.Int64, events) // unix nanos when create i was sent
		var (
			mu       sync.Mutex
			lat      []time.Duration
			received atomic.Int64
			ready    sync.WaitGroup
			done     sync.WaitGroup
		)
		var conns []*rawClient
		var connsMu sync.Mutex
		for w := 0; w < watchers; w++ {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				c, err := dialRaw(s.URL)
				if err != nil {
					ready.Done()
					return
				}
				connsMu.Lock()
				conns = append(conns, c)
				connsMu.Unlock()
				r, err := c.watch("/api/v1/namespaces/default/pods?watch=true&resourceVersion=1")
				ready.Done()
				if err != nil {
					return
				}
				local := make([]time.Duration, 0, events)
				got := 0
				for got < events {
					line, err := r.ReadSlice('\n')
					if err != nil && err != bufio.ErrBufferFull {
						break
					}
					now := time.Now().UnixNano()
					idx := podIndex(line)
					if idx < 0 || idx >= events {
						continue
					}
					local = append(local, time.Duration(now-sent[idx].Load()))
					got++
					for err == bufio.ErrBufferFull { // a line longer than the buffer
						_, err = r.ReadSlice('\n')
					}
				}
				received.Add(int64(got))
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			}()
		}
		ready.Wait()

		// The writer: `rate` creates per second, paced, from a pool of senders.
		jobs := make(chan int, events)
		var writers sync.WaitGroup
		var failed atomic.Int64
		createLat := make([]time.Duration, events) // each create's own latency
		// Enough senders that create latency never paces the writer.
		for w := 0; w < 256; w++ {
			writers.Add(1)
			go func() {
				defer writers.Done()
				c, err := dialRaw(s.URL)
				if err != nil {
					failed.Add(1)
					return
				}
				defer c.close()
				for idx := range jobs {
					body := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-%d"},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"busybox:1.36"}]}}`, idx))
					t0 := time.Now()
					sent[idx].Store(t0.UnixNano())
					if code, err := c.post("/api/v1/namespaces/default/pods", body); err != nil || code != http.StatusCreated {
						failed.Add(1)
					}
					createLat[idx] = time.Since(t0)
				}
			}()
		}
		start := time.Now()
		for idx := 0; idx < events; idx++ {
			if wait := time.Until(start.Add(time.Duration(idx) * time.Second / rate)); wait > 0 {
				<-time.After(wait)
			}
			jobs <- idx
		}
		close(jobs)
		writers.Wait()
		writeRate := float64(events) / time.Since(start).Seconds()

		finished := make(chan struct{})
		go func() { done.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(60 * time.Second):
		}
		for _, c := range conns {
			c.close()
		}
		done.Wait()
		if f := failed.Load(); f > 0 {
			b.Fatalf("%d creates failed", f)
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(writeRate, "writes/s")
		b.ReportMetric(float64(received.Load())/float64(watchers*events)*100, "delivered-%")
		b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
		// The delivery latency includes the create's own: its p99 tells the two apart.
		slices.Sort(createLat)
		b.ReportMetric(float64(percentile(createLat, 0.99).Microseconds())/1000, "create-p99-ms")
		s.Stop()
	}
}

// podIndex finds the index in a watch line's pod name "w-<index>", or -1.
func podIndex(line []byte) int {
	i := bytes.Index(line, []byte(`"name":"w-`))
	if i < 0 {
		return -1
	}
	n := 0
	j := i + len(`"name":"w-`)
	for ; j < len(line) && line[j] >= '0' && line[j] <= '9'; j++ {
		n = n*10 + int(line[j]-'0')
	}
	if j == i+len(`"name":"w-`) {
		return -1
	}
	return n
}
