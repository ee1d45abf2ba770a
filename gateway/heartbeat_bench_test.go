package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/internal/testenv"
	"github.com/kubeactor/kubeactor/nodeagent/nodestatus"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// BenchmarkHeartbeats is the steady state's heartbeat (issue 18): nodes post their
// status as the simulated agent does (a protobuf PUT of the whole node to
// nodes/{name}/status, from the node last returned, Ready's heartbeat time moved on
// by one status period), round-robin over BENCH_HEARTBEAT_NODES nodes (1,000) from
// 8 writers, with BENCH_HEARTBEAT_PODS pods (10,000) bound to them. The server runs
// as it does by default: tracing every request, the scheduler and the node
// controller on, the store on disk. B/op and allocs/op are the whole process's per heartbeat (the
// client's encoding and decoding included): HTTP, admission, the node's actor, the
// store's commit, the change log and the feeds; cpu-µs/op is the process's CPU time
// (user and system) per heartbeat, the writers' included.
func BenchmarkHeartbeats(b *testing.B) {
	nodes := testenv.PositiveInt(b, "BENCH_HEARTBEAT_NODES", 1000)
	pods := testenv.PositiveInt(b, "BENCH_HEARTBEAT_PODS", 10000)
	const writers = 8
	if nodes < writers {
		b.Fatalf("BENCH_HEARTBEAT_NODES=%d: want at least %d", nodes, writers)
	}
	tr, err := tracing.New(tracing.Options{Sampling: 1, Capacity: tracing.DefaultCapacity})
	if err != nil {
		b.Fatal(err)
	}
	h := newHarness(b, harnessOptions{tracer: tr, scheduler: true, onDisk: true,
		nodes: actors.NodeOptions{Config: node.Config{MonitorGracePeriod: time.Hour, StartupGracePeriod: time.Hour}}})
	h.useProtobuf()
	ctx := context.Background()
	infos := make([]nodestatus.Info, nodes)
	objs := make([]*corev1.Node, nodes)
	start := time.Now()
	for i := range infos {
		infos[i] = nodestatus.Info{
			Name:       fmt.Sprintf("hb-%05d", i),
			InternalIP: fmt.Sprintf("127.1.%d.%d", i/250, i%250+1),
			Hostname:   fmt.Sprintf("hb-%05d", i),
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"),
				corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			System:     corev1.NodeSystemInfo{KubeletVersion: "v1.0.0-kubeactor", KubeProxyVersion: "v1.0.0-kubeactor", OSImage: "simulated"},
			DaemonPort: 10250,
		}
		n, err := h.client.CoreV1().Nodes().Create(ctx, nodestatus.Registration(infos[i], start), metav1.CreateOptions{})
		if err != nil {
			b.Fatalf("register: %v", err)
		}
		objs[i] = n
	}
	bindPods(b, h.store, pods, infos)

	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	t0, cpu0 := time.Now(), processCPU(b)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []int // this writer's nodes: no two writers post the same node's status
			for i := w; i < nodes; i += writers {
				mine = append(mine, i)
			}
			for beat := 0; next.Add(1) <= int64(b.N); beat++ {
				i := mine[beat%len(mine)]
				at := start.Add(time.Duration(beat/len(mine)+1) * 10 * time.Second) // the next period's
				cur := objs[i].DeepCopy()
				cur.Status = nodestatus.Status(cur.Status, infos[i], at)
				updated, err := h.client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
				if err != nil {
					b.Errorf("heartbeat %s: %v", infos[i].Name, err)
					return
				}
				objs[i] = updated
			}
		}(w)
	}
	wg.Wait()
	elapsed, cpu := time.Since(t0), processCPU(b)-cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "heartbeats/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time the process has used (user and system, all threads:
// the server's and the writers').
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bindPods stores n pods bound round-robin to the nodes of infos, directly.
func bindPods(b *testing.B, store *persistence.Store, n int, infos []nodestatus.Info) {
	const batch = 1000
	for i := 0; i < n; i += batch {
		var cmds []persistence.Command
		for j := i; j < i+batch && j < n; j++ {
			p := newPod(fmt.Sprintf("hb-pod-%06d", j)).label("app", "web").node(infos[j%len(infos)].Name).obj()
			p.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
			p.UID = types.UID(newUID())
			p.CreationTimestamp = metav1.Now()
			p.Spec.RestartPolicy = corev1.RestartPolicyAlways
			p.Status.Phase = corev1.PodRunning
			cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Key: podKey("default", p.Name), Object: p})
		}
		if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
			b.Fatalf("bind pods: %v", err)
		}
	}
}
