package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/persistence"
)

// TestTerminatedPodGC: with a threshold of 3, the collector's tick deletes the two
// oldest of five terminated pods and leaves running pods alone.
func TestTerminatedPodGC(t *testing.T) {
	st := openStore(t)
	clock := newFakeClock()
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Clock: clock, Resources: testResources,
		SyncPacing: -1, TerminatedPodGCThreshold: 3})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop)
	t0 := time.Date(2015, 7, 10, 11, 0, 0, 0, time.UTC)
	ctx := context.Background()
	mk := func(name string, phase corev1.PodPhase, minute int) {
		p := newPod("default", name).node("n1").obj()
		p.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(minute) * time.Minute))
		p.Status.Phase = phase
		if _, err := s.Create(ctx, podKey("default", name), p); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	for i := range 5 {
		phase := corev1.PodSucceeded
		if i%2 == 1 {
			phase = corev1.PodFailed
		}
		mk(fmt.Sprintf("done-%d", i), phase, 10-i) // done-4 is the oldest
	}
	mk("running", corev1.PodRunning, 0)
	if n := countPods(st, "default"); n != 6 {
		t.Fatalf("%d pods before the tick", n)
	}
	eventually(t, 10*time.Second, "the two oldest terminated pods deleted", func() bool {
		clock.Advance(PodGCPeriod) // the collector's timer may not be armed yet at the first poll
		return gone(st, podKey("default", "done-4")) && gone(st, podKey("default", "done-3"))
	})
	for _, name := range []string{"done-0", "done-1", "done-2", "running"} {
		if _, err := st.Get(persistence.Key{Resource: "pods", Namespace: "default", Name: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
