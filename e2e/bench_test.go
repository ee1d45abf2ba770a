package e2e

import (
	"bytes"
	"crypto/tls"
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
	"k8s.io/apimachinery/pkg/api/resource"
)

// benchPod is a pod of realistic size (~1.9 KB of JSON).
func benchPod(name string) []byte {
	p := testPod(name)
	p.Labels = map[string]string{"app": "bench", "tier": "backend", "release": "stable"}
	p.Annotations = map[string]string{"kubeactor.io/description": strings.Repeat("x", 400)}
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
	}}
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "bench"}, {Name: "LEVEL", Value: "3"}}
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	// The create benchmarks measure the API's write path: their pods belong to a
	// scheduler that does not exist, so the scheduler leaves them alone (with no nodes it
	// would otherwise fail each of them and record an event per pod).
	p.Spec.SchedulerName = "none"
	b, _ := json.Marshal(p)
	return b
}

// createPods POSTs n pods from `clients` concurrent keep-alive connections and
// returns the rate and the sorted latencies. lean chooses rawClient over net/http.
func createPods(b *testing.B, base string, n, clients int, lean bool) (perSec float64, lat []time.Duration) {
	b.Helper()
	perSec, lat, _ = createPodsAt(b, podTarget{base: base, namespace: "default", lean: lean}, n, clients)
	return perSec, lat
}

// podTarget is where createPodsAt posts: a server's URL (http or https), a namespace,
// for https the client's TLS configuration, and a bearer token ("" for none).
type podTarget struct {
	base, namespace, token string
	tls                    *tls.Config
	// lean chooses rawClient (HTTP/1.1 over one connection per client) over net/http;
	// h2 lets net/http speak HTTP/2 over TLS when the server offers it, as client-go
	// does (one connection for all clients), instead of HTTP/1.1.
	lean, h2 bool
}

// createPodsAt is createPods against t; it also returns the protocol the responses
// came in ("HTTP/1.1" or "HTTP/2.0").
func createPodsAt(b *testing.B, t podTarget, n, clients int) (perSec float64, lat []time.Duration, proto string) {
	b.Helper()
	path := "/api/v1/namespaces/" + t.namespace + "/pods"
	// A copy of the TLS configuration: the transport adds "h2" to its NextProtos.
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients, TLSClientConfig: t.tls.Clone(), ForceAttemptHTTP2: t.h2}
	httpClient := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	header := ""
	if t.token != "" {
		header = "Authorization: Bearer " + t.token + "\r\n"
	}
	// The bodies are made before the clock starts: building a request is the load
	// generator's cost, and on 2 cores it would be taken from the server.
	prefix := fmt.Sprintf("bench-%d-", time.Now().UnixNano())
	const placeholder = "NAME-PLACEHOLDER"
	tmpl := benchPod(placeholder)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = bytes.Replace(tmpl, []byte(placeholder), []byte(prefix+strconv.Itoa(i+1)), 1)
	}
	var next, failures atomic.Int64
	var firstErr atomic.Value
	var protoSeen atomic.Value
	protoSeen.Store("HTTP/1.1")
	lats := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var raw *rawClient
			if t.lean {
				var err error
				if raw, err = dialRawTLS(t.base, t.tls); err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
					failures.Add(int64(n))
					return
				}
				raw.header = header
				defer raw.close()
			}
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				body := bodies[i-1]
				t0 := time.Now()
				code, err := 0, error(nil)
				if t.lean {
					code, err = raw.post(path, body)
				} else {
					var req *http.Request
					if req, err = http.NewRequest(http.MethodPost, t.base+path, bytes.NewReader(body)); err != nil {
						b.Error(err)
						return
					}
					req.Header.Set("Content-Type", "application/json")
					if t.token != "" {
						req.Header.Set("Authorization", "Bearer "+t.token)
					}
					var resp *http.Response
					if resp, err = httpClient.Do(req); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						code = resp.StatusCode
						protoSeen.Store(resp.Proto)
					}
				}
				if err != nil || code != http.StatusCreated {
					if err == nil {
						err = fmt.Errorf("status %d", code)
					}
					firstErr.CompareAndSwap(nil, err.Error())
					failures.Add(1)
					continue
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failures.Load(); f > 0 {
		b.Fatalf("%d of %d creates failed (first: %v)", f, n, firstErr.Load())
	}
	for _, l := range lats {
		lat = append(lat, l...)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return float64(n) / elapsed.Seconds(), lat, protoSeen.Load().(string)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(float64(len(sorted)-1)*p)]
}

func rssBytes(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkServer30kPods runs the real binary: 30,000 durable pod creates from 64
// concurrent clients, then lists them, and reports the server's RSS.
func BenchmarkServer30kPods(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := StartServer(b, "")
		rate, lat := createPods(b, s.URL, 30000, 64, true)
		b.ReportMetric(rate, "creates/s")
		b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")

		listPath := s.URL + "/api/v1/namespaces/default/pods"
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := getJSON(listPath, &list); err != nil || len(list.Items) != 30000 {
			b.Fatalf("list: %d items, %v", len(list.Items), err)
		}
		var listTimes []time.Duration
		for j := 0; j < 5; j++ {
			t0 := time.Now()
			resp, err := http.Get(listPath)
			if err != nil {
				b.Fatal(err)
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			listTimes = append(listTimes, time.Since(t0))
		}
		sort.Slice(listTimes, func(i, j int) bool { return listTimes[i] < listTimes[j] })
		b.ReportMetric(float64(listTimes[len(listTimes)/2].Microseconds())/1000, "list30k-ms")
		b.ReportMetric(rssBytes(b, s.cmd.Process.Pid)/(1<<20), "rss-MiB")
		s.Stop()
	}
}

// BenchmarkServerCreatesNetHTTP is BenchmarkServer30kPods' create phase with Go's
// net/http client as the load generator, for comparison: on 2 cores the client's own
// cost lowers the figure.
func BenchmarkServerCreatesNetHTTP(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := StartServer(b, "")
		rate, lat := createPods(b, s.URL, 30000, 64, false)
		b.ReportMetric(rate, "creates/s")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
		s.Stop()
	}
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
