package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
)

func simPod(name, uid, cpu, mem string, phase corev1.PodPhase) *corev1.Pod {
	c := corev1.Container{Name: "c", Image: "i"}
	if cpu != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	start := metav1.NewTime(t0.Add(-100 * time.Second))
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: k8stypes.UID(uid)},
		Spec: corev1.PodSpec{NodeName: "t-0", Containers: []corev1.Container{c}}, Status: corev1.PodStatus{Phase: phase, StartTime: &start}}
}

func TestSimulatedSummary(t *testing.T) {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	tests := []struct {
		name      string
		pods      []*corev1.Pod
		wantPods  int
		checkPods func(t *testing.T, ps []statsapi.PodStats)
		nodeCPU   func(nc uint64) bool
	}{
		{"idle node uses its own share", nil, 0, nil, func(nc uint64) bool { return nc == 100e6 }},
		{"a share of the requests", []*corev1.Pod{simPod("web", "u1", "200m", "100Mi", corev1.PodRunning)}, 1,
			func(t *testing.T, ps []statsapi.PodStats) {
				c := ps[0].Containers[0]
				nc, ws := *c.CPU.UsageNanoCores, *c.Memory.WorkingSetBytes
				if nc < 60e6 || nc > 140e6 || ws < 30<<20 || ws > 70<<20 {
					t.Errorf("usage %d nanocores, %d bytes: want 30-70%% of 200m and 100Mi", nc, ws)
				}
				if *c.CPU.UsageCoreNanoSeconds != uint64(float64(nc)*100) {
					t.Errorf("cumulative %d, want the rate over the pod's 100s", *c.CPU.UsageCoreNanoSeconds)
				}
			}, func(nc uint64) bool { return nc > 100e6 && nc < 300e6 }},
		{"without requests: 5m and 16Mi at most", []*corev1.Pod{simPod("bare", "u2", "", "", corev1.PodRunning)}, 1,
			func(t *testing.T, ps []statsapi.PodStats) {
				if nc, ws := *ps[0].CPU.UsageNanoCores, *ps[0].Memory.WorkingSetBytes; nc == 0 || nc > 5e6 || ws == 0 || ws > 16<<20 {
					t.Errorf("usage %d nanocores %d bytes", nc, ws)
				}
			}, nil},
		{"pending pods are not running", []*corev1.Pod{simPod("wait", "u3", "100m", "1Mi", corev1.PodPending)}, 0, nil, func(nc uint64) bool { return nc == 100e6 }},
		{"capped at capacity", []*corev1.Pod{simPod("a", "u4", "2", "3Gi", corev1.PodRunning), simPod("b", "u5", "2", "3Gi", corev1.PodRunning)}, 2, nil,
			func(nc uint64) bool { return nc == 1e9 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SimulatedSummary("t-0", capacity, t0.Add(-time.Hour), tt.pods, t0)
			if s.Node.NodeName != "t-0" || s.Node.CPU == nil || s.Node.Memory == nil || *s.Node.Memory.WorkingSetBytes > 1<<30 {
				t.Fatalf("node %+v", s.Node)
			}
			if tt.nodeCPU != nil && !tt.nodeCPU(*s.Node.CPU.UsageNanoCores) {
				t.Errorf("node cpu %d nanocores", *s.Node.CPU.UsageNanoCores)
			}
			if len(s.Pods) != tt.wantPods {
				t.Fatalf("pods %d, want %d", len(s.Pods), tt.wantPods)
			}
			if tt.checkPods != nil {
				tt.checkPods(t, s.Pods)
			}
			again := SimulatedSummary("t-0", capacity, t0.Add(-time.Hour), tt.pods, t0.Add(time.Second))
			for i := range s.Pods {
				if *again.Pods[i].CPU.UsageNanoCores != *s.Pods[i].CPU.UsageNanoCores {
					t.Errorf("pod %d's rate changed between two looks", i)
				}
			}
		})
	}
}

// TestStatsHandlerByAddress runs a simulator and its stats server on a wildcard
// port: each node answers at its own loopback InternalIP with its own pods.
func TestStatsHandlerByAddress(t *testing.T) {
	cs := fake.NewClientset(simPod("web", "u1", "200m", "100Mi", corev1.PodRunning))
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	log := logrus.New()
	log.SetOutput(io.Discard)
	s, err := New(Config{Nodes: 2, NamePrefix: "t", StatusFrequency: time.Second, Workers: 2, DaemonPort: int32(port),
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("10")}},
		apiclient.NewForClientset(cs), log)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.StatsHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait(); _ = srv.Close() })

	get := func(ip string) (statsapi.Summary, int, error) {
		var sum statsapi.Summary
		resp, err := http.Get("http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/stats/summary")
		if err != nil {
			return sum, 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return sum, resp.StatusCode, nil
		}
		return sum, resp.StatusCode, json.NewDecoder(resp.Body).Decode(&sum)
	}
	ip0, _ := NodeIP(0)
	ip1, _ := NodeIP(1)
	eventually(t, "t-0 reports web", func() error {
		sum, code, err := get(ip0.String())
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("code %d: %v", code, err)
		}
		if sum.Node.NodeName != "t-0" || len(sum.Pods) != 1 || sum.Pods[0].PodRef.Name != "web" {
			return fmt.Errorf("summary %+v", sum)
		}
		return nil
	})
	eventually(t, "t-1 reports no pod", func() error {
		sum, code, err := get(ip1.String())
		if err != nil || code != http.StatusOK || sum.Node.NodeName != "t-1" || len(sum.Pods) != 0 {
			return fmt.Errorf("code %d %v: %+v", code, err, sum)
		}
		return nil
	})
	if _, code, err := get("127.0.0.1"); err != nil || code != http.StatusNotFound {
		t.Errorf("127.0.0.1 (no node there): %d %v, want 404", code, err)
	}
	n, err := cs.CoreV1().Nodes().Get(context.Background(), "t-0", metav1.GetOptions{})
	if err != nil || n.Status.DaemonEndpoints.KubeletEndpoint.Port != int32(port) {
		t.Errorf("t-0's daemon port: %+v %v, want %d", n.Status.DaemonEndpoints, err, port)
	}
}
