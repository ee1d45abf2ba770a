package stats

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

var t0 = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)

func sample(at time.Duration, cpu, ws uint64) Sample {
	return Sample{Time: t0.Add(at), CPUUsageNanos: cpu, MemoryUsageBytes: ws + 100, MemoryWorkingSetBytes: ws}
}

func u(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestNanoCores(t *testing.T) {
	tests := []struct {
		name   string
		h      History
		want   uint64
		wantOK bool
	}{
		{"one sample", History{Last: sample(0, 5e9, 0)}, 0, false},
		{"half a core over 10s", History{Prev: sample(0, 1e9, 0), Last: sample(10*time.Second, 6e9, 0)}, 5e8, true},
		{"two cores over 1s", History{Prev: sample(0, 0, 0), Last: sample(time.Second, 2e9, 0)}, 2e9, true},
		{"counter went back (restart)", History{Prev: sample(0, 9e9, 0), Last: sample(time.Second, 1e9, 0)}, 0, false},
		{"same time", History{Prev: sample(0, 1, 0), Last: sample(0, 2, 0)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.h.NanoCores()
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("NanoCores = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	node := Node{Name: "n1", StartTime: t0.Add(-time.Hour), History: History{
		Prev: Sample{Time: t0, CPUUsageNanos: 10e9},
		Last: Sample{Time: t0.Add(10 * time.Second), CPUUsageNanos: 25e9, MemoryUsageBytes: 3000, MemoryWorkingSetBytes: 2000, MemoryAvailableBytes: 6000},
	}}
	two := History{Prev: sample(0, 1e9, 50), Last: sample(10*time.Second, 2e9, 60)} // 100m
	twoB := History{Prev: sample(0, 0, 10), Last: sample(10*time.Second, 3e9, 20)}  // 300m
	first := History{Last: sample(10*time.Second, 4e9, 70)}                         // no rate yet
	tests := []struct {
		name string
		pods []Pod
		// per pod: containers' names, pod usageNanoCores (nil: none), pod working set (nil: none)
		want []podWant
	}{
		{"no pods", nil, nil},
		{"one container with two samples", []Pod{{Namespace: "default", Name: "web", UID: "u1", Containers: []Container{{Name: "c", History: two}}}},
			[]podWant{{"default/web", []string{"c"}, ptr(1e8), ptr(60)}}},
		{"two containers summed", []Pod{{Namespace: "ns", Name: "p", UID: "u2", Containers: []Container{{Name: "a", History: two}, {Name: "b", History: twoB}}}},
			[]podWant{{"ns/p", []string{"a", "b"}, ptr(4e8), ptr(80)}}},
		{"a container with one sample: no pod rate", []Pod{{Namespace: "ns", Name: "p", UID: "u3", Containers: []Container{{Name: "a", History: two}, {Name: "new", History: first}}}},
			[]podWant{{"ns/p", []string{"a", "new"}, nil, ptr(130)}}},
		{"a container never sampled is left out", []Pod{{Namespace: "ns", Name: "p", UID: "u4", Containers: []Container{{Name: "gone"}}}},
			[]podWant{{"ns/p", []string{}, nil, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(node, tt.pods)
			if got.Node.NodeName != "n1" || u(got.Node.CPU.UsageNanoCores) != uint64(15e8) || u(got.Node.CPU.UsageCoreNanoSeconds) != uint64(25e9) ||
				u(got.Node.Memory.WorkingSetBytes) != uint64(2000) || u(got.Node.Memory.AvailableBytes) != uint64(6000) || !got.Node.CPU.Time.Time.Equal(t0.Add(10*time.Second)) {
				t.Errorf("node = %+v", got.Node)
			}
			if len(got.Pods) != len(tt.want) {
				t.Fatalf("pods = %d, want %d", len(got.Pods), len(tt.want))
			}
			for i, w := range tt.want {
				p := got.Pods[i]
				if p.PodRef.Namespace+"/"+p.PodRef.Name != w.name {
					t.Errorf("pod %d = %s, want %s", i, p.PodRef.Namespace+"/"+p.PodRef.Name, w.name)
				}
				var names []string
				for _, c := range p.Containers {
					names = append(names, c.Name)
					if c.CPU == nil || c.CPU.UsageCoreNanoSeconds == nil || c.Memory == nil || c.Memory.WorkingSetBytes == nil || c.Memory.UsageBytes == nil {
						t.Errorf("container %s: cpu %+v memory %+v", c.Name, c.CPU, c.Memory)
					}
				}
				if strings.Join(names, ",") != strings.Join(w.containers, ",") {
					t.Errorf("containers = %v, want %v", names, w.containers)
				}
				var nc, ws any
				if p.CPU != nil {
					nc = u(p.CPU.UsageNanoCores)
				}
				if p.Memory != nil {
					ws = u(p.Memory.WorkingSetBytes)
				}
				if nc != u(w.nanoCores) || ws != u(w.workingSet) {
					t.Errorf("pod usageNanoCores %v workingSet %v, want %v %v", nc, ws, u(w.nanoCores), u(w.workingSet))
				}
			}
		})
	}
}

type podWant struct {
	name                  string
	containers            []string
	nanoCores, workingSet *uint64
}

func ptr(v float64) *uint64 { n := uint64(v); return &n }

func TestBuildJSONShape(t *testing.T) {
	two := History{Prev: sample(0, 1e9, 50), Last: sample(10*time.Second, 2e9, 60)}
	data, err := json.Marshal(Build(Node{Name: "n1"}, []Pod{{Namespace: "default", Name: "web", UID: "u1", Containers: []Container{{Name: "c", History: two}}}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"node":{"nodeName":"n1"`, `"podRef":{"name":"web","namespace":"default","uid":"u1"}`,
		`"usageNanoCores":100000000`, `"usageCoreNanoSeconds":2000000000`, `"workingSetBytes":60`, `"usageBytes":160`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("summary JSON lacks %s:\n%s", want, data)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     uint64
		wantErr  bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"busy excludes idle and iowait", "cpu  100 20 30 5000 40 1 2 3 7 0\ncpu0 50 10 15 2500 20 1 1 1 0 0\n", (100 + 20 + 30 + 1 + 2 + 3) * 1e7, false},
		{"old kernel, four fields", "cpu 1 2 3 4\n", (1 + 2 + 3) * 1e7, false},
		{"no cpu line", "intr 1 2\n", 0, true},
		{"garbage", "cpu a b c d\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStat(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseProcStat = %d, %v; want %d (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name, in              string
		usage, working, avail uint64
		wantErr               bool
	}{
		{"typical", "MemTotal:  1000 kB\nMemFree:  200 kB\nMemAvailable: 600 kB\nInactive(file):  300 kB\nHugePages_Total: 0\n",
			800 * 1024, 500 * 1024, 500 * 1024, false},
		{"no inactive cache figure", "MemTotal: 1000 kB\nMemFree: 400 kB\n", 600 * 1024, 600 * 1024, 400 * 1024, false},
		{"no total", "MemFree: 400 kB\n", 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMeminfo(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr || got.MemoryUsageBytes != tt.usage || got.MemoryWorkingSetBytes != tt.working || got.MemoryAvailableBytes != tt.avail {
				t.Errorf("ParseMeminfo = %+v, %v; want usage %d working set %d available %d", got, err, tt.usage, tt.working, tt.avail)
			}
		})
	}
}

// fakeEngine answers each container's stats from a counter that grows by a core's
// tenth per call.
type fakeEngine struct{ calls map[string]int }

func (f *fakeEngine) Stats(_ context.Context, id string) (runtime.Stats, error) {
	if id == "missing" {
		return runtime.Stats{}, runtime.NotFound("container missing")
	}
	f.calls[id]++
	n := uint64(f.calls[id])
	return runtime.Stats{Time: t0.Add(time.Duration(n) * 10 * time.Second), CPUUsageNanos: n * 1e9, MemoryUsageBytes: 2 << 20, MemoryWorkingSetBytes: 1 << 20}, nil
}

type fakePods struct{ pods []*corev1.Pod }

func (f fakePods) Pods() []*corev1.Pod { return f.pods }
func (f fakePods) ContainerID(ns, pod, container string, _ bool) (string, error) {
	if container == "gone" {
		return "", runtime.NotFound("container")
	}
	if container == "dying" {
		return "missing", nil
	}
	return ns + "/" + pod + "/" + container, nil
}

func TestCollector(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte("cpu 100 0 100 800 0 0 0 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte("MemTotal: 4096 kB\nMemFree: 1024 kB\nInactive(file): 1024 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	running := func(name string, ctrs ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		for _, c := range ctrs {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		return p
	}
	pending := running("pending", "c")
	pending.Status.Phase = corev1.PodPending
	c := &Collector{NodeName: "n1", Engine: &fakeEngine{calls: map[string]int{}}, ProcDir: dir,
		Pods: fakePods{[]*corev1.Pod{running("web", "app", "gone", "dying"), pending}}}
	if _, ok := c.Summary(); ok {
		t.Fatal("a summary before the first round")
	}
	c.Collect(context.Background())
	s, ok := c.Summary()
	if !ok || len(s.Pods) != 1 || len(s.Pods[0].Containers) != 1 {
		t.Fatalf("first round: %v %+v", ok, s)
	}
	if app := s.Pods[0].Containers[0]; app.Name != "app" || app.CPU.UsageNanoCores != nil || u(app.CPU.UsageCoreNanoSeconds) != uint64(1e9) {
		t.Errorf("first round: app %+v cpu %+v, want no rate yet", app, app.CPU)
	}
	if u(s.Node.Memory.WorkingSetBytes) != uint64(2048*1024) || u(s.Node.CPU.UsageCoreNanoSeconds) != uint64(200*1e7) || s.Node.CPU.UsageNanoCores != nil {
		t.Errorf("first round: node cpu %+v memory %+v", s.Node.CPU, s.Node.Memory)
	}
	c.Collect(context.Background())
	s, _ = c.Summary()
	app := s.Pods[0].Containers[0]
	if u(app.CPU.UsageNanoCores) != uint64(1e8) || u(app.Memory.WorkingSetBytes) != uint64(1<<20) || u(s.Pods[0].CPU.UsageNanoCores) != uint64(1e8) {
		t.Errorf("second round: app cpu %+v memory %+v pod cpu %+v, want 100m and 1Mi", app.CPU, app.Memory, s.Pods[0].CPU)
	}
	if s.Node.CPU.UsageNanoCores == nil { // /proc did not change: a rate of 0
		t.Errorf("second round: node has no rate: %+v", s.Node.CPU)
	}
	var _ statsapi.Summary = s
}
