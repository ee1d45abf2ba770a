package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sleepPod is a busybox pod that runs until deleted.
const sleepPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: kubeactor/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 3600"]
`

// TestDockerMaxPods: an agent started with --max-pods 2 reports two pod slots in
// its node's capacity; of three pods the scheduler places two on it and keeps the
// third Pending with a FailedScheduling event saying the node has too many pods;
// once one of the two is deleted the third runs.
func TestDockerMaxPods(t *testing.T) {
	n := startDockerNode(t, append([]string{"--max-pods", "2"}, privatePorts...)...)
	ctx := context.Background()
	node, err := n.cs.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Status.Capacity.Pods().Value(); got != 2 {
		t.Fatalf("node capacity pods %d, want 2 (--max-pods 2)", got)
	}
	names := []string{"slot-a", "slot-b", "slot-c"}
	for _, name := range names[:2] {
		n.create(fmt.Sprintf(sleepPod, name))
		n.waitPod(name, 60*time.Second, "Running", running)
	}
	n.create(fmt.Sprintf(sleepPod, names[2]))
	Eventually(t, 30*time.Second, "FailedScheduling: too many pods", func() error {
		if ev := n.events(names[2]); !strings.Contains(ev, "FailedScheduling") || !strings.Contains(ev, "Too many pods") {
			return fmt.Errorf("events:\n%s", ev)
		}
		return nil
	})
	if p, err := n.pod(names[2]); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("the third pod: %v, bound to %q", err, p.Spec.NodeName)
	}
	n.s.MustKubectl(t, "", "delete", "pod", names[0], "--grace-period=0", "--force")
	p := n.waitPod(names[2], 90*time.Second, "Running once a slot is free", running)
	if p.Spec.NodeName != n.name {
		t.Errorf("the third pod runs on %q", p.Spec.NodeName)
	}
}

// TestDockerMinimumContainerTTL: with --maximum-dead-containers-per-container 0 and a
// collection every second, the agent would keep only the latest instance of a
// crashing container; --minimum-container-ttl-duration 1h keeps every dead instance
// (none has been dead an hour), through the many collections that run while the
// container restarts three times.
func TestDockerMinimumContainerTTL(t *testing.T) {
	n := startDockerNode(t, append([]string{"--maximum-dead-containers-per-container", "0", "--gc-period", "1s",
		"--minimum-container-ttl-duration", "1h"}, privatePorts...)...)
	n.create(fmt.Sprintf(exitPod, "crasher", "Always", 1))
	n.waitPod("crasher", 180*time.Second, "restarted three times", restartedAtLeast(3))
	p, err := n.pod("crasher")
	if err != nil {
		t.Fatal(err)
	}
	restarts := p.Status.ContainerStatuses[0].RestartCount
	var instances []string
	for _, name := range n.dockerPS(true) {
		if strings.HasPrefix(name, "k8s_main.") {
			instances = append(instances, name)
		}
	}
	// Every instance started so far: the first and one per restart (a restart may
	// be under way: one more).
	if len(instances) < int(restarts)+1 {
		t.Errorf("%d instances of the container after %d restarts, want every one kept: %v", len(instances), restarts, instances)
	}
}

// TestDockerTerminatedPodGC: a server started with --terminated-pod-gc-threshold 2
// keeps at most two terminated pods: of four pods that ran to completion on the
// Docker node the two created first are deleted, the two newest and a running pod
// stay.
func TestDockerTerminatedPodGC(t *testing.T) {
	requireDocker(t)
	s := StartServer(t, "", "--terminated-pod-gc-threshold", "2")
	n := startDockerNodeOn(t, s, privatePorts...)
	ctx := context.Background()
	n.create(fmt.Sprintf(sleepPod, "stays"))
	n.waitPod("stays", 60*time.Second, "Running", running)
	done := []string{"done-1", "done-2", "done-3", "done-4"}
	for _, name := range done {
		n.create(fmt.Sprintf(exitPod, name, "Never", 0))
		// One at a time: the creation times, which order the collection, differ.
		n.waitPod(name, 60*time.Second, "Succeeded", finished(corev1.PodSucceeded, 0, "Completed"))
	}
	Eventually(t, 90*time.Second, "two terminated pods left", func() error {
		list, err := n.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var left []string
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				left = append(left, p.Name)
			}
		}
		sort.Strings(left)
		if want := "done-3 done-4 stays"; strings.Join(left, " ") != want {
			return fmt.Errorf("pods %v, want %s", left, want)
		}
		return nil
	})
}
