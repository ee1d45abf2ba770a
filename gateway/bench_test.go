package gateway

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/persistence"
)

// benchClient is an HTTP client that keeps enough connections for the benchmarks.
func benchClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
}

func p99(lat []time.Duration) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[(len(lat)*99)/100]
}

// BenchmarkCreatePods: 64 concurrent clients POST JSON pods; every 201 is durable.
func BenchmarkCreatePods(b *testing.B) { benchCreatePods(b, harnessOptions{}) }

func benchCreatePods(b *testing.B, o harnessOptions) {
	h := newHarness(b, o)
	const clients = 64
	hc := benchClient(clients)
	url := h.http.URL + "/api/v1/namespaces/default/pods"
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				t0 := time.Now()
				resp, err := hc.Post(url, "application/json", bytes.NewBufferString(podJSON(fmt.Sprintf("bench-%d", i))))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("code %d", resp.StatusCode)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
	b.ReportMetric(float64(p99(all).Microseconds())/1000, "p99-ms")
}

// fillPods stores n pods directly (bypassing the gateway, which is not measured).
func fillPods(b *testing.B, store *persistence.Store, n int) {
	const batch = 1000
	for i := 0; i < n; i += batch {
		var cmds []persistence.Command
		for j := i; j < i+batch && j < n; j++ {
			p := newPod(fmt.Sprintf("pod-%05d", j)).label("app", "web").obj()
			p.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
			p.UID = types.UID(newUID())
			p.CreationTimestamp = metav1.Now()
			p.Spec.RestartPolicy = corev1.RestartPolicyAlways
			cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("default", p.Name), Object: p})
		}
		if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
			b.Fatalf("fill: %v", err)
		}
	}
}

// BenchmarkList30kPods lists 30,000 pods as JSON through HTTP (body fully read).
func BenchmarkList30kPods(b *testing.B) {
	h := newHarness(b, harnessOptions{})
	fillPods(b, h.store, 30000)
	hc := benchClient(1)
	var size int64
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		resp, err := hc.Get(h.http.URL + "/api/v1/pods")
		if err != nil {
			b.Fatal(err)
		}
		size, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(lat))/1000, "ms/list")
	b.ReportMetric(float64(size)/(1<<20), "MiB/list")
}

// BenchmarkWatchFanout: 1,000 watchers of pods while one writer creates 1,000 pods/s;
// each watcher must receive every event. Latency is from the write request being sent
// to the watcher reading the event, so it includes the durable commit.
func BenchmarkWatchFanout(b *testing.B) {
	h := newHarness(b, harnessOptions{})
	const watchers = 1000
	const rate = 1000 // writes per second
	writes := b.N
	if writes < 200 {
		writes = 200
	}
	rev := strconv.FormatInt(h.store.Revision(), 10)
	hc := benchClient(watchers + 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	committed := sync.Map{} // pod name -> time the create was sent
	var ready, done sync.WaitGroup
	lat := make([][]time.Duration, watchers)
	for w := 0; w < watchers; w++ {
		ready.Add(1)
		done.Add(1)
		go func(w int) {
			defer done.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.http.URL+"/api/v1/namespaces/default/pods?watch=true&resourceVersion="+rev, nil)
			resp, err := hc.Do(req)
			if err != nil {
				ready.Done()
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			ready.Done()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			seen := 0
			for seen < writes && sc.Scan() {
				line := sc.Bytes()
				i := bytes.Index(line, []byte(`"name":"w-`))
				if i < 0 {
					continue
				}
				name := line[i+len(`"name":"`):]
				name = name[:bytes.IndexByte(name, '"')]
				seen++
				now := time.Now()
				if v, ok := committed.Load(string(name)); ok {
					lat[w] = append(lat[w], now.Sub(v.(time.Time)))
				}
			}
			if seen < writes {
				b.Errorf("watcher %d saw %d of %d events", w, seen, writes)
			}
		}(w)
	}
	ready.Wait()
	b.ResetTimer()
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	wc := benchClient(16)
	var wwg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i < writes; i++ {
		<-tick.C
		sem <- struct{}{}
		wwg.Add(1)
		go func(i int) {
			defer wwg.Done()
			defer func() { <-sem }()
			name := fmt.Sprintf("w-%d", i)
			committed.Store(name, time.Now())
			resp, err := wc.Post(h.http.URL+"/api/v1/namespaces/default/pods", "application/json", bytes.NewBufferString(podJSON(name)))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}(i)
	}
	wwg.Wait()
	done.Wait()
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	b.ReportMetric(float64(len(all))/float64(watchers*writes)*100, "%timed")
	b.ReportMetric(float64(p99(all).Microseconds())/1000, "p99-ms")
}
