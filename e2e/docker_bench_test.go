package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// BenchmarkDockerPodStartup measures pod startup latency on the Docker agent, from
// the create request to the first status showing every container running (image
// present): one pod at a time, and 30 created at once. The floor next to one pod is
// a plain `docker run -d` of the same image. Next to the 30 pods there are two: 30
// plain `docker run -d` at once (half the container starts), and the fair one, 30
// pods' worth of plain `docker run -d` at once (dockerRunPods: 60 runs, two a pod),
// with the ratio of the pods' p99 to it. It also reports the agent's RSS while it
// runs the 30 pods, and the CPU time the agent and the server spent a pod while the
// 30 started.
func BenchmarkDockerPodStartup(b *testing.B) {
	// The read-only and healthz servers are off: their fixed ports may be taken by
	// another agent on a shared machine, and the benchmark does not use them.
	n := startDockerNode(b, "--read-only-port", "0", "--healthz-port", "0")
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		seen := n.watchRunning(b)
		var single []time.Duration
		for j := 0; j < 10; j++ {
			name := fmt.Sprintf("one-%d-%d", i, j)
			start := time.Now()
			n.createPod(b, name)
			single = append(single, (<-seen.wait(name)).Sub(start))
		}
		agentCPU0, serverCPU0 := cpuSeconds(b, n.agent.cmd.Process.Pid), cpuSeconds(b, n.s.cmd.Process.Pid)
		starts := map[string]time.Time{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for j := 0; j < 30; j++ {
			name := fmt.Sprintf("many-%d-%d", i, j)
			wg.Add(1)
			go func() {
				defer wg.Done()
				mu.Lock()
				starts[name] = time.Now()
				mu.Unlock()
				n.createPod(b, name)
			}()
		}
		wg.Wait()
		var many []time.Duration
		for name, at := range starts {
			many = append(many, (<-seen.wait(name)).Sub(at))
		}
		// What the pods cost our own processes (the engine's work aside), from the
		// first create to the last pod running.
		agentCPU := (cpuSeconds(b, n.agent.cmd.Process.Pid) - agentCPU0) / 30
		serverCPU := (cpuSeconds(b, n.s.cmd.Process.Pid) - serverCPU0) / 30
		rss := rssBytes(b, n.agent.cmd.Process.Pid) / (1 << 20)
		floor := dockerRunFloor(b, 10)
		floor30 := dockerRunParallel(b, 30)
		floor60 := dockerRunPods(b, 30)
		for _, ds := range [][]time.Duration{single, many, floor, floor30, floor60} {
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		}
		b.ReportMetric(ms(percentile(single, 0.5)), "one-p50-ms")
		b.ReportMetric(ms(percentile(single, 0.99)), "one-p99-ms")
		b.ReportMetric(ms(percentile(many, 0.5)), "30-p50-ms")
		b.ReportMetric(ms(percentile(many, 0.99)), "30-p99-ms")
		b.ReportMetric(ms(percentile(floor, 0.5)), "docker-run-p50-ms")
		b.ReportMetric(ms(percentile(floor, 0.99)), "docker-run-p99-ms")
		b.ReportMetric(ms(percentile(floor30, 0.5)), "docker-run-30-p50-ms")
		b.ReportMetric(ms(percentile(floor30, 0.99)), "docker-run-30-p99-ms")
		b.ReportMetric(ms(percentile(floor60, 0.5)), "docker-run-60-p50-ms")
		b.ReportMetric(ms(percentile(floor60, 0.99)), "docker-run-60-p99-ms")
		b.ReportMetric(float64(percentile(many, 0.99))/float64(percentile(floor60, 0.99)), "30-p99/docker-run-60-p99")
		b.ReportMetric(agentCPU*1000, "30-agent-cpu-ms/pod")
		b.ReportMetric(serverCPU*1000, "30-server-cpu-ms/pod")
		b.ReportMetric(rss, "agent-rss-MiB")
		zero := int64(0)
		_ = n.cs.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		Eventually(b, 120*time.Second, "pods removed", func() error {
			if names := n.dockerPS(true); len(names) > 0 {
				return fmt.Errorf("%d containers left", len(names))
			}
			return nil
		})
	}
}

func (n *dockerNode) createPod(t testing.TB, name string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: imageTestServer, ImagePullPolicy: corev1.PullIfNotPresent,
		}}},
	}
	if _, err := n.cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Errorf("create %s: %v", name, err)
	}
}

// runningWatch records when each pod was first seen with every container running.
type runningWatch struct {
	mu      sync.Mutex
	at      map[string]time.Time
	waiters map[string][]chan time.Time
}

func (n *dockerNode) watchRunning(t testing.TB) *runningWatch {
	w, err := n.cs.CoreV1().Pods("default").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rw := &runningWatch{at: map[string]time.Time{}, waiters: map[string][]chan time.Time{}}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted || running(p) != nil {
				continue
			}
			now := time.Now()
			rw.mu.Lock()
			if _, done := rw.at[p.Name]; !done {
				rw.at[p.Name] = now
				for _, c := range rw.waiters[p.Name] {
					c <- now
				}
				delete(rw.waiters, p.Name)
			}
			rw.mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return rw
}

func (rw *runningWatch) wait(name string) <-chan time.Time {
	c := make(chan time.Time, 1)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if at, ok := rw.at[name]; ok {
		c <- at
		return c
	}
	rw.waiters[name] = append(rw.waiters[name], c)
	return c
}

// dockerRunFloor times k plain `docker run -d` of the test image.
func dockerRunFloor(t testing.TB, k int) []time.Duration {
	var out []time.Duration
	for i := 0; i < k; i++ {
		name := "kubeactor-floor-" + randHex(4)
		start := time.Now()
		if b, err := exec.Command("docker", "run", "-d", "--name", name, imageTestServer).CombinedOutput(); err != nil {
			t.Fatalf("docker run: %v\n%s", err, b)
		}
		out = append(out, time.Since(start))
		_ = exec.Command("docker", "rm", "-f", name).Run()
	}
	return out
}

// dockerRunParallel times k plain `docker run -d` of the test image started at once:
// the engine's own floor for k pods (a pod is two containers, so twice this work).
func dockerRunParallel(t testing.TB, k int) []time.Duration {
	out := make([]time.Duration, k)
	var wg sync.WaitGroup
	names := make([]string, k)
	for i := range k {
		names[i] = "kubeactor-floor-" + randHex(4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if b, err := exec.Command("docker", "run", "-d", "--name", names[i], imageTestServer).CombinedOutput(); err != nil {
				t.Errorf("docker run: %v\n%s", err, b)
			}
			out[i] = time.Since(start)
		}()
	}
	wg.Wait()
	_ = exec.Command("docker", append([]string{"rm", "-f"}, names...)...).Run()
	return out
}

// dockerRunPods times k pods' worth of plain `docker run -d` started at once, two
// runs a pod as the agent makes them: the infra container (the pause image, with a
// shareable IPC namespace and the pod's hostname), then the app (the test image,
// with the lowest CPU shares, as a container without requests gets) joining the
// infra container's network and IPC namespaces, so it cannot start before it. A
// pod's time is from its first run's start to its second run's end.
func dockerRunPods(t testing.TB, k int) []time.Duration {
	out := make([]time.Duration, k)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var names []string
	run := func(name string, args ...string) (string, bool) {
		mu.Lock()
		names = append(names, name)
		mu.Unlock()
		b, err := exec.Command("docker", append([]string{"run", "-d", "--name", name}, args...)...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Errorf("docker run %s: %v\n%s", name, err, stderr)
			return "", false
		}
		return strings.TrimSpace(string(b)), true
	}
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod := "kubeactor-floor-" + randHex(4)
			start := time.Now()
			infra, ok := run(pod+"-infra", "--ipc", "shareable", "--hostname", pod, imagePause)
			if !ok {
				return
			}
			if _, ok := run(pod+"-app", "--network", "container:"+infra, "--ipc", "container:"+infra, "--cpu-shares", "2", imageTestServer); !ok {
				return
			}
			out[i] = time.Since(start)
		}()
	}
	wg.Wait()
	_ = exec.Command("docker", append([]string{"rm", "-f"}, names...)...).Run()
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
