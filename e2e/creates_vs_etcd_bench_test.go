package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// Issue 18's "CPU per write": durable pod creates through REST against etcd's bare
// durable put, measured in one run by the same kind of load generator. Every request
// is built as it is sent (a client marshals its object per request, as kubectl and
// client-go do): for etcd a JSON put request of a 2 KB value through its gateway
// (etcdPut), for kubeactor a fresh pod marshalled to JSON, and then to protobuf.

// loadResult is what one load phase measured.
type loadResult struct {
	rate    float64         // requests per second
	lat     []time.Duration // sorted
	cpuUS   float64         // the server's CPU time per request, µs
	loadCPU float64         // the load generator's (this process's) CPU time per request, µs
}

// drive sends n requests from `clients` goroutines sharing one keep-alive net/http
// client; send(client, i) makes and sends request i (1-based). It measures the CPU
// time of the process pid and of this process over the window.
func drive(b *testing.B, pid, n, clients int, send func(*http.Client, int64) error) loadResult {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var next, failures atomic.Int64
	var firstErr atomic.Value
	lats := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	cpu0, self0 := cpuSeconds(b, pid), cpuSeconds(b, os.Getpid())
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				t0 := time.Now()
				if err := send(client, i); err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
					failures.Add(1)
					continue
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, self1 := cpuSeconds(b, pid), cpuSeconds(b, os.Getpid())
	if f := failures.Load(); f > 0 {
		b.Fatalf("%d of %d requests failed (first: %v)", f, n, firstErr.Load())
	}
	r := loadResult{rate: float64(n) / elapsed.Seconds(), cpuUS: (cpu1 - cpu0) / float64(n) * 1e6, loadCPU: (self1 - self0) / float64(n) * 1e6}
	for _, l := range lats {
		r.lat = append(r.lat, l...)
	}
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	return r
}

// schedulablePod is benchPod's pod for the default scheduler: with no nodes it stays
// Pending, and the scheduler tries it and records why it cannot place it.
func schedulablePod(tb testing.TB) *corev1.Pod {
	tb.Helper()
	var pod corev1.Pod
	if err := json.Unmarshal(benchPod("x"), &pod); err != nil {
		tb.Fatal(err)
	}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	pod.Spec.SchedulerName = ""
	return &pod
}

// postCreate sends one create and expects 201.
func postCreate(client *http.Client, url, contentType string, body []byte) error {
	resp, err := client.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("create: HTTP %d", resp.StatusCode)
	}
	return nil
}

// createsAgainst starts a fresh server and creates n pods, each marshalled by
// `marshal` as it is sent. With KUBEACTOR_BENCH_PROFILE set, it saves a CPU profile of
// the server's first seconds of load to that file.
func createsAgainst(b *testing.B, n, clients int, contentType string, marshal func(*corev1.Pod) ([]byte, error)) loadResult {
	b.Helper()
	s := StartServer(b, "")
	defer s.Stop()
	url := s.URL + "/api/v1/namespaces/default/pods"
	tmpl := schedulablePod(b)
	prefix := fmt.Sprintf("cve-%d-", time.Now().UnixNano())
	profiled := make(chan struct{})
	if out := os.Getenv("KUBEACTOR_BENCH_PROFILE"); out != "" {
		go func() {
			defer close(profiled)
			if err := saveProfile(s.URL, out+"."+strings.TrimPrefix(contentType, "application/"), 4); err != nil {
				b.Log(err)
			}
		}()
	} else {
		close(profiled)
	}
	r := drive(b, s.cmd.Process.Pid, n, clients, func(client *http.Client, i int64) error {
		pod := *tmpl
		pod.Name = prefix + strconv.FormatInt(i, 10)
		body, err := marshal(&pod)
		if err != nil {
			return err
		}
		return postCreate(client, url, contentType, body)
	})
	<-profiled
	return r
}

// saveProfile fetches a CPU profile of `seconds` from the server at base into file.
func saveProfile(base, file string, seconds int) error {
	return savePprof(base, "profile", file, seconds)
}

// savePprof saves the server's pprof profile kind (profile, allocs, heap) to file:
// over the next seconds when seconds > 0 (for allocs and heap, the difference over
// them), else as it stands.
func savePprof(base, kind, file string, seconds int) error {
	url := fmt.Sprintf("%s/debug/pprof/%s", base, kind)
	if seconds > 0 {
		url += fmt.Sprintf("?seconds=%d", seconds)
	}
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// benchN is the number of requests of each phase: KUBEACTOR_BENCH_N, or def.
func benchN(tb testing.TB, def int) int {
	tb.Helper()
	if v := os.Getenv("KUBEACTOR_BENCH_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			tb.Fatalf("KUBEACTOR_BENCH_N=%q: want a positive number", v)
		}
		return n
	}
	return def
}

// BenchmarkCreatesVsEtcd measures, in one run and with 64 clients each: durable 2 KB
// puts into a single etcd member (JSON gateway, request marshalled per put), then
// durable pod creates into a fresh kubeactor server with JSON bodies, then into
// another fresh server with protobuf bodies (each pod marshalled per request, the
// default scheduler on and no nodes, so every pod is unschedulable). It reports the
// rates, their ratio to etcd's, p99 latencies, the server's and etcd's CPU time per
// write, and the load generator's own CPU per request. KUBEACTOR_BENCH_N sets the
// requests per phase (default 20,000).
func BenchmarkCreatesVsEtcd(b *testing.B) {
	const clients = 64
	n := benchN(b, 20000)
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for range b.N {
		load := loadAvg()

		etcd := startEtcd(b, 1)
		base := etcd.clients[0]
		value := bytes.Repeat([]byte("v"), 2048)
		prefix := fmt.Sprintf("/cve/%d/", time.Now().UnixNano())
		puts := drive(b, etcd.cmds[0].Process.Pid, n, clients, func(client *http.Client, i int64) error {
			return etcdPut(client, base, prefix+strconv.FormatInt(i, 10), value)
		})
		etcd.stop()

		jsonR := createsAgainst(b, n, clients, "application/json", func(p *corev1.Pod) ([]byte, error) { return json.Marshal(p) })
		protoR := createsAgainst(b, n, clients, "application/vnd.kubernetes.protobuf", func(p *corev1.Pod) ([]byte, error) {
			var buf bytes.Buffer
			err := pb.Encode(p, &buf)
			return buf.Bytes(), err
		})

		b.ReportMetric(puts.rate, "etcd-puts/s")
		b.ReportMetric(jsonR.rate, "json-creates/s")
		b.ReportMetric(protoR.rate, "protobuf-creates/s")
		b.ReportMetric(jsonR.rate/puts.rate, "json/etcd")
		b.ReportMetric(protoR.rate/puts.rate, "protobuf/etcd")
		b.ReportMetric(float64(percentile(puts.lat, 0.99).Microseconds())/1000, "etcd-p99-ms")
		b.ReportMetric(float64(percentile(jsonR.lat, 0.99).Microseconds())/1000, "json-p99-ms")
		b.ReportMetric(float64(percentile(protoR.lat, 0.99).Microseconds())/1000, "protobuf-p99-ms")
		b.ReportMetric(puts.cpuUS, "etcd-cpu-us/put")
		b.ReportMetric(jsonR.cpuUS, "json-cpu-us/create")
		b.ReportMetric(protoR.cpuUS, "protobuf-cpu-us/create")
		b.ReportMetric(puts.loadCPU, "etcd-client-cpu-us/req")
		b.ReportMetric(jsonR.loadCPU, "json-client-cpu-us/req")
		b.ReportMetric(protoR.loadCPU, "protobuf-client-cpu-us/req")
		b.ReportMetric(load, "load1")
	}
}
