package kubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"

	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/nodeagent/metrics"
)

const (
	testPause = "kubeactor/pause:latest"
	testImage = "app:1"
)

// runAgent runs an agent for node n1 on a fake engine and a fake API server until
// the test ends.
func runAgent(t *testing.T, opts ...func(*Config)) (*fakeEngine, kubernetes.Interface) {
	t.Helper()
	return runMeasuredAgent(t, nil, opts...)
}

// runMeasuredAgent is runAgent with the agent's metrics in m.
func runMeasuredAgent(t *testing.T, m *metrics.Agent, opts ...func(*Config)) (*fakeEngine, kubernetes.Interface) {
	t.Helper()
	cs := fake.NewSimpleClientset()
	eng := newFakeEngine(testPause, testImage)
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	cfg := Config{
		NodeName: "n1", NodeIP: "192.0.2.1", Hostname: "n1", PauseImage: testPause, RootDir: t.TempDir(),
		SyncFrequency: 200 * time.Millisecond, StatusFrequency: time.Second, MaxPods: 10,
		MaxDeadPerContainer: 1, MaxDead: 10, GCPeriod: time.Hour, MinGCAge: time.Minute,
		ClusterDomain: "cluster.local", Version: "test", Metrics: m,
	}
	for _, o := range opts {
		o(&cfg)
	}
	a := New(cfg, apiclient.NewForClientset(cs), eng, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return eng, cs
}

// eventually polls check until it passes or 10 s have gone by.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	poll.Until(t, 10*time.Second, what, check)
}

func testPod(name string, policy corev1.RestartPolicy) *corev1.Pod {
	grace := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{
			NodeName: "n1", RestartPolicy: policy, TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "app", Image: testImage, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
}

// appContainer finds the running or latest instance of the pod's app container.
func appContainer(eng *fakeEngine, uid string) (runtime.Container, bool) {
	cs, _ := eng.ListContainers(context.Background(), map[string]string{podsync.LabelPodUID: uid, podsync.LabelContainer: "app"})
	var latest runtime.Container
	for _, c := range cs {
		if latest.ID == "" || c.ID > latest.ID {
			latest = c
		}
	}
	return latest, latest.ID != ""
}

func TestAgentRegistersNode(t *testing.T) {
	_, cs := runAgent(t)
	eventually(t, "node registered", func() error {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Status.NodeInfo.ContainerRuntimeVersion != "docker://20.10.0-fake" || n.Status.Capacity.Cpu().Value() != 2 {
			return fmt.Errorf("status %+v", n.Status)
		}
		return nil
	})
}

// TestAgentRunsPod: a bound pod gets an infra container and its app container, and
// its status says Running with the infra container's IP.
func TestAgentRunsPod(t *testing.T) {
	eng, cs := runAgent(t)
	pods := cs.CoreV1().Pods("default")
	if _, err := pods.Create(context.Background(), testPod("web", corev1.RestartPolicyAlways), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod Running", func() error {
		p, err := pods.Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || !strings.HasPrefix(p.Status.PodIP, "10.1.0.") || len(p.Status.ContainerStatuses) != 1 {
			return fmt.Errorf("status %+v", p.Status)
		}
		return nil
	})
	sandboxes, _ := eng.ListContainers(context.Background(), map[string]string{podsync.LabelPodUID: "uid-web", podsync.LabelContainer: podsync.InfraName})
	if len(sandboxes) != 1 || !sandboxes[0].Running() || !strings.HasPrefix(sandboxes[0].Name, "k8s_POD.") {
		t.Errorf("infra containers %+v", sandboxes)
	}

	// A crash under Always: the container is started again and the count shows it.
	app, _ := appContainer(eng, "uid-web")
	eng.exit(app.ID, 1)
	eventually(t, "restarted", func() error {
		p, err := pods.Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := p.Status.ContainerStatuses
		if len(st) != 1 || st[0].RestartCount != 1 || st[0].State.Running == nil || st[0].LastTerminationState.Terminated == nil {
			return fmt.Errorf("container statuses %+v", st)
		}
		return nil
	})

	// Deleted from the API server: every container goes.
	if err := pods.Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "containers removed", func() error {
		if left, _ := eng.ListContainers(context.Background(), map[string]string{podsync.LabelPodUID: "uid-web"}); len(left) > 0 {
			return fmt.Errorf("%d containers left", len(left))
		}
		return nil
	})
}

// TestAgentInspectsOnce: the engine is asked about each of a pod's containers once
// while it runs, however often the pod is synced, and once more when it exits.
func TestAgentInspectsOnce(t *testing.T) {
	eng, cs := runAgent(t)
	pods := cs.CoreV1().Pods("default")
	if _, err := pods.Create(context.Background(), testPod("web", corev1.RestartPolicyAlways), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	restarted := func(n int32) func() error {
		return func() error {
			p, err := pods.Get(context.Background(), "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if st := p.Status.ContainerStatuses; p.Status.Phase != corev1.PodRunning || len(st) != 1 || st[0].State.Running == nil || st[0].RestartCount != n {
				return fmt.Errorf("status %+v", p.Status)
			}
			return nil
		}
	}
	moreSyncs := func() {
		t.Helper()
		from, _ := eng.calls()
		eventually(t, "five more syncs", func() error {
			if n, _ := eng.calls(); n < from+5 {
				return fmt.Errorf("%d lists", n-from)
			}
			return nil
		})
	}
	eventually(t, "pod Running", restarted(0))
	moreSyncs()
	sandboxes, _ := eng.ListContainers(context.Background(), map[string]string{podsync.LabelPodUID: "uid-web", podsync.LabelContainer: podsync.InfraName})
	first, _ := appContainer(eng, "uid-web")
	if len(sandboxes) != 1 {
		t.Fatalf("infra containers %+v", sandboxes)
	}
	_, inspects := eng.calls()
	if inspects[sandboxes[0].ID] != 1 || inspects[first.ID] != 1 {
		t.Errorf("running: infra container inspected %d times, app %d times; want once each", inspects[sandboxes[0].ID], inspects[first.ID])
	}

	eng.exit(first.ID, 1)
	eventually(t, "restarted", restarted(1))
	moreSyncs()
	second, _ := appContainer(eng, "uid-web")
	_, inspects = eng.calls()
	if inspects[sandboxes[0].ID] != 1 || inspects[first.ID] != 2 || inspects[second.ID] != 1 {
		t.Errorf("after a crash: infra container inspected %d times, exited app %d, its successor %d; want 1, 2, 1",
			inspects[sandboxes[0].ID], inspects[first.ID], inspects[second.ID])
	}
}

// TestAgentFinishedPods: under Never and OnFailure an exit decides the phase.
func TestAgentFinishedPods(t *testing.T) {
	tests := []struct {
		policy corev1.RestartPolicy
		code   int
		phase  corev1.PodPhase
	}{
		{corev1.RestartPolicyNever, 0, corev1.PodSucceeded},
		{corev1.RestartPolicyNever, 2, corev1.PodFailed},
		{corev1.RestartPolicyOnFailure, 0, corev1.PodSucceeded},
	}
	eng, cs := runAgent(t)
	pods := cs.CoreV1().Pods("default")
	for i, tt := range tests {
		name := fmt.Sprintf("job-%d", i)
		if _, err := pods.Create(context.Background(), testPod(name, tt.policy), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var app runtime.Container
		eventually(t, name+" started", func() error {
			c, ok := appContainer(eng, "uid-"+name)
			if !ok || !c.Running() {
				return fmt.Errorf("not running")
			}
			app = c
			return nil
		})
		eng.exit(app.ID, tt.code)
		eventually(t, fmt.Sprintf("%s %s", name, tt.phase), func() error {
			p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != tt.phase {
				return fmt.Errorf("phase %s", p.Status.Phase)
			}
			return nil
		})
		// The infra container of a finished pod is stopped.
		eventually(t, name+" infra stopped", func() error {
			sbs, _ := eng.ListContainers(context.Background(), map[string]string{podsync.LabelPodUID: "uid-" + name, podsync.LabelContainer: podsync.InfraName})
			for _, sb := range sbs {
				if sb.Running() {
					return fmt.Errorf("infra container still running")
				}
			}
			return nil
		})
	}
}

// TestAgentMissingImage: an image that is neither local nor pullable is
// ErrImagePull in the pod's status, and the agent goes on with other pods.
func TestAgentMissingImage(t *testing.T) {
	_, cs := runAgent(t)
	pods := cs.CoreV1().Pods("default")
	bad := testPod("bad", corev1.RestartPolicyAlways)
	bad.Spec.Containers[0].Image = "missing:1"
	never := testPod("never", corev1.RestartPolicyAlways)
	never.Spec.Containers[0].Image, never.Spec.Containers[0].ImagePullPolicy = "missing:2", corev1.PullNever
	for _, p := range []*corev1.Pod{bad, never, testPod("good", corev1.RestartPolicyAlways)} {
		if _, err := pods.Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "ErrImagePull", func() error {
		p, err := pods.Get(context.Background(), "bad", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
				return nil
			}
		}
		return fmt.Errorf("status %+v", p.Status.ContainerStatuses)
	})
	eventually(t, "ErrImageNeverPull", func() error {
		p, err := pods.Get(context.Background(), "never", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && w.Reason == "ErrImageNeverPull" {
				return nil
			}
		}
		return fmt.Errorf("status %+v", p.Status.ContainerStatuses)
	})
	eventually(t, "the good pod runs", func() error {
		p, err := pods.Get(context.Background(), "good", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
}
