package replication

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkDecide30kPods is one sync of an RC that owns 30,000 running pods: the
// cost every sync of a large RC pays, since it looks at every pod it may own.
func BenchmarkDecide30kPods(b *testing.B) {
	for _, tt := range []struct {
		name     string
		template map[string]string
	}{
		{"template labels are the selector", map[string]string{"app": "web"}},
		{"template with more labels", map[string]string{"app": "web", "tier": "web"}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			rc := newRC("web", 30000).templateLabels(tt.template).obj()
			pods := make([]*corev1.Pod, 0, 30000)
			for i := range 30000 {
				pods = append(pods, newPod(fmt.Sprintf("web-%05d", i), rc).obj())
			}
			for b.Loop() {
				plan := Decide(rc, pods, Expectations{}, func() string { return "x" }, now)
				if plan.Status.Replicas != 30000 {
					b.Fatalf("replicas %d", plan.Status.Replicas)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/sync")
		})
	}
}
