package sim

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
	"github.com/kubeactor/kubeactor/nodeagent/metrics"
)

func scrape(m *metrics.Agent, sample string) float64 {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	match := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(body)
	if match == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(match[1]), 64)
	return v
}

// The simulator reports the pods running on its nodes (found running or started)
// and measures the start of those it starts.
func TestSimulatorMetrics(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "default", UID: "uid-old"},
		Spec:       corev1.PodSpec{NodeName: "m-1", Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.100.1.2"},
	})
	m := metrics.New()
	s, err := New(Config{
		Nodes: 2, NamePrefix: "m", StatusFrequency: time.Second, Workers: 2, Metrics: m,
		Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")},
	}, apiclient.NewForClientset(cs), logrus.New())
	if err != nil {
		t.Fatal(err)
	}
	if n := scrape(m, "kubelet_running_pods"); n != 0 {
		t.Errorf("running pods before the watch: %v", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "default", UID: "uid-new", CreationTimestamp: metav1.Now()},
		Spec:       corev1.PodSpec{NodeName: "m-0", Containers: []corev1.Container{{Name: "c"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "two running pods with three containers, one start measured", func() error {
		got := []float64{
			scrape(m, "kubelet_running_pods"),
			scrape(m, `kubelet_running_containers{container_state="running"}`),
			scrape(m, "kubelet_pod_start_duration_seconds_count"),
		}
		if got[0] != 2 || got[1] != 3 || got[2] != 1 {
			return fmt.Errorf("running pods, containers, starts = %v", got)
		}
		return nil
	})
}
