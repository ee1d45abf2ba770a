package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkSchedule30kPodsOn5000Nodes runs the real server and a simulated agent of
// 5,000 nodes, creates one RC of 30,000 pods with CPU and memory requests, and measures
// from the RC's creation until every pod is bound and persisted. It reports the rate,
// the p50/p99 time from a pod's creation to its binding (as a watcher sees them), the
// spread (max - min pods per node) and the server's RSS.
func BenchmarkSchedule30kPodsOn5000Nodes(b *testing.B) {
	const nodes, replicas = 5000, 30000
	for i := 0; i < b.N; i++ {
		s := StartServer(b, "")
		startAgent(b, s, "--simulate", fmt.Sprint(nodes), "--node-status-update-frequency", "10s")
		cs := clientset(b, s)
		waitNodesReady(b, cs, nodes)

		// As in the book, the RC's pods are behind a Service: in v1.0 it is
		// ServiceSpreadingPriority that spreads them evenly (LeastRequested's integer
		// scores tie for nodes holding one to four of these small pods).
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "bench"},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "bench"}, Ports: []corev1.ServicePort{{Port: 80}}},
		}
		if _, err := cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		w := watchBindings(b, s, replicas)
		n := int32(replicas)
		rc := &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "bench"},
			Spec: corev1.ReplicationControllerSpec{
				Replicas: &n, Selector: map[string]string{"app": "bench"},
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "bench"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
						}}}}},
				},
			},
		}
		start := time.Now()
		if _, err := cs.CoreV1().ReplicationControllers("default").Create(context.Background(), rc, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		select {
		case <-w.done:
		case <-time.After(10 * time.Minute):
			b.Fatalf("only %d of %d pods bound after 10 minutes", w.boundCount(), replicas)
		}
		elapsed := w.lastBound.Sub(start)

		list, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=bench"})
		if err != nil {
			b.Fatal(err)
		}
		perNode := map[string]int{}
		for _, p := range list.Items {
			if p.Spec.NodeName == "" {
				b.Fatalf("pod %s is not bound in the store", p.Name)
			}
			perNode[p.Spec.NodeName]++
		}
		if len(list.Items) != replicas {
			b.Fatalf("%d pods stored, want %d", len(list.Items), replicas)
		}
		lo, hi := replicas, 0
		for j := 0; j < nodes; j++ {
			c := perNode[fmt.Sprintf("sim-%d", j)]
			lo, hi = min(lo, c), max(hi, c)
		}
		lat := w.latencies()
		b.ReportMetric(float64(replicas)/elapsed.Seconds(), "pods/s")
		b.ReportMetric(elapsed.Seconds(), "seconds")
		b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(hi-lo), "spread")
		b.ReportMetric(rssBytes(b, s.cmd.Process.Pid)/(1<<20), "rss-MiB")
		s.Stop()
	}
}

// bindingWatch follows the pods of the default namespace and notes, per pod, when it
// was first seen and when it was first seen bound to a node.
type bindingWatch struct {
	mu        sync.Mutex
	created   map[string]time.Time
	bound     map[string]time.Time
	lastBound time.Time
	want      int
	done      chan struct{}
}

func watchBindings(b *testing.B, s *Server, want int) *bindingWatch {
	b.Helper()
	c, err := dialRaw(s.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.close)
	list, err := http.Get(s.URL + "/api/v1/namespaces/default/pods?limit=1")
	if err != nil {
		b.Fatal(err)
	}
	var meta struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	err = json.NewDecoder(list.Body).Decode(&meta)
	list.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	r, err := c.watch("/api/v1/namespaces/default/pods?watch=true&resourceVersion=" + meta.Metadata.ResourceVersion)
	if err != nil {
		b.Fatal(err)
	}
	w := &bindingWatch{created: map[string]time.Time{}, bound: map[string]time.Time{}, want: want, done: make(chan struct{})}
	go func() {
		for {
			line, err := r.ReadSlice('\n')
			if err == io.EOF || (err != nil && !strings.Contains(err.Error(), "buffer full")) {
				return
			}
			if err != nil { // a line longer than the buffer: bound pods are not that long
				continue
			}
			now := time.Now()
			name := fieldAfter(line, `"name":"`)
			if name == "" {
				continue
			}
			w.mu.Lock()
			if _, ok := w.created[name]; !ok {
				w.created[name] = now
			}
			if _, ok := w.bound[name]; !ok && fieldAfter(line, `"nodeName":"`) != "" {
				w.bound[name] = now
				w.lastBound = now
				if len(w.bound) == w.want {
					close(w.done)
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *bindingWatch) boundCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bound)
}

func (w *bindingWatch) latencies() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]time.Duration, 0, len(w.bound))
	for name, t := range w.bound {
		out = append(out, t.Sub(w.created[name]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// fieldAfter returns the string value that follows key in line (its first occurrence).
func fieldAfter(line []byte, key string) string {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return ""
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
