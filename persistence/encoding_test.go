package persistence

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The storage encoding was chosen with these benchmarks (see docs/storage-encoding.md): what a
// write costs to encode, what a restart costs to decode, and what a list costs when
// the gateway needs JSON for every item.

func BenchmarkEncodePodJSON(b *testing.B) {
	p := pod("default", "web-0")
	var n int
	for i := 0; i < b.N; i++ {
		out, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.ReportMetric(float64(n), "bytes")
}

func BenchmarkEncodePodProtobuf(b *testing.B) {
	p := pod("default", "web-0")
	var n int
	for i := 0; i < b.N; i++ {
		out, err := p.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.ReportMetric(float64(n), "bytes")
}

func BenchmarkDecodePodJSON(b *testing.B) {
	data, _ := json.Marshal(pod("default", "web-0"))
	for i := 0; i < b.N; i++ {
		var p corev1.Pod
		if err := json.Unmarshal(data, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePodProtobuf(b *testing.B) {
	data, _ := pod("default", "web-0").Marshal()
	for i := 0; i < b.N; i++ {
		var p corev1.Pod
		if err := p.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList30kFromProtobuf is the list a protobuf store would serve: JSON is not
// stored, so every item is encoded at list time (or the first time, then cached at the
// cost of a second copy in memory). Compare with BenchmarkList30k.
func BenchmarkList30kFromProtobuf(b *testing.B) {
	pods := make([]*corev1.Pod, 30000)
	for i := range pods {
		pods[i] = pod("default", "web-0")
	}
	buf := make([]byte, 0, 64<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = buf[:0]
		for _, p := range pods {
			js, err := json.Marshal(p)
			if err != nil {
				b.Fatal(err)
			}
			buf = append(buf, js...)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/list")
}
