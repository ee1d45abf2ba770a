package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// postBodies POSTs every body from `clients` keep-alive raw connections with the
// given content type and returns the creates per second.
func postBodies(b *testing.B, base, contentType string, bodies [][]byte, clients int) float64 {
	b.Helper()
	var next, failures atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialRaw(base)
			if err != nil {
				failures.Add(1)
				return
			}
			defer c.close()
			c.contentType = contentType
			for {
				i := next.Add(1)
				if i > int64(len(bodies)) {
					return
				}
				if code, err := c.post("/api/v1/namespaces/default/pods", bodies[i-1]); err != nil || code != http.StatusCreated {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if f := failures.Load(); f > 0 {
		b.Fatalf("%d of %d %s creates failed", f, len(bodies), contentType)
	}
	return float64(len(bodies)) / time.Since(start).Seconds()
}

// BenchmarkServerCreatesProtobuf creates the same realistic pods (benchPod) on one
// server, first as JSON bodies, then as protobuf bodies (what client-go's controllers
// send), from 64 raw keep-alive clients with the bodies prepared before the clock
// starts, and reports both rates and the server's CPU time per create of each.
func BenchmarkServerCreatesProtobuf(b *testing.B) {
	const n = 20000
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for i := 0; i < b.N; i++ {
		s := StartServer(b, "")
		pid := s.cmd.Process.Pid
		jsonBodies, protoBodies := make([][]byte, n), make([][]byte, n)
		var pod corev1.Pod
		if err := json.Unmarshal(benchPod("x"), &pod); err != nil {
			b.Fatal(err)
		}
		pod.APIVersion, pod.Kind = "v1", "Pod"
		for j := range n {
			pod.Name = fmt.Sprintf("json-%d-%d", i, j)
			jsonBodies[j], _ = json.Marshal(&pod)
			pod.Name = fmt.Sprintf("proto-%d-%d", i, j)
			var buf bytes.Buffer
			if err := pb.Encode(&pod, &buf); err != nil {
				b.Fatal(err)
			}
			protoBodies[j] = buf.Bytes()
		}
		cpu0 := cpuSeconds(b, pid)
		jsonRate := postBodies(b, s.URL, "application/json", jsonBodies, 64)
		cpu1 := cpuSeconds(b, pid)
		protoRate := postBodies(b, s.URL, "application/vnd.kubernetes.protobuf", protoBodies, 64)
		cpu2 := cpuSeconds(b, pid)
		b.ReportMetric(jsonRate, "json-creates/s")
		b.ReportMetric(protoRate, "protobuf-creates/s")
		b.ReportMetric(protoRate/jsonRate, "protobuf/json")
		b.ReportMetric((cpu1-cpu0)/n*1e6, "json-cpu-us/create")
		b.ReportMetric((cpu2-cpu1)/n*1e6, "protobuf-cpu-us/create")
		b.ReportMetric(float64(len(protoBodies[0])), "protobuf-body-B")
		b.ReportMetric(float64(len(jsonBodies[0])), "json-body-B")
		s.Stop()
	}
}
