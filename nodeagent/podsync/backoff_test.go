package podsync

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
	"testing"
	"time"
)

// TestBackoffSequence replays a container crashing repeatedly: each restart waits
// twice as long as the one before, up to BackoffMax.
func TestBackoffSequence(t *testing.T) {
	b := Backoff{}
	const key = "web_00000000"
	now := t0
	var waits []time.Duration
	for range 8 {
		started := now
		finished := started.Add(time.Second) // runs one second, then crashes
		now = finished
		if _, until, held := b.Hold(key, started, finished, now); held {
			waits = append(waits, until.Sub(finished))
			now = until
		} else {
			waits = append(waits, 0)
		}
		if _, _, held := b.Hold(key, started, finished, now); held {
			t.Fatalf("still held at %v", now)
		}
		b.Next(key, started, finished)
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 300 * time.Second, 300 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Errorf("wait before restart %d = %v, want %v (all: %v)", i+1, waits[i], want[i], waits)
		}
	}
}

func TestBackoffReset(t *testing.T) {
	const key = "web_00000000"
	entry := BackoffEntry{Delay: 80 * time.Second, Until: t0.Add(80 * time.Second)} // set at an exit at t0
	tests := []struct {
		name              string
		started, finished time.Time
		now               time.Time
		held              bool
		next              time.Duration
	}{
		{"short run soon after: held, then doubled", t0.Add(90 * time.Second), t0.Add(100 * time.Second),
			t0.Add(110 * time.Second), true, 160 * time.Second},
		{"long run: not held, reset", t0.Add(time.Minute), t0.Add(11 * time.Minute),
			t0.Add(11 * time.Minute), false, BackoffInitial},
		{"stale entry: not held, reset", t0.Add(20 * time.Minute), t0.Add(20*time.Minute + time.Second),
			t0.Add(20*time.Minute + time.Second), false, BackoffInitial},
		{"wait over: not held, doubled", t0.Add(90 * time.Second), t0.Add(100 * time.Second),
			t0.Add(180 * time.Second), false, 160 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Backoff{key: entry}
			if _, _, held := b.Hold(key, tt.started, tt.finished, tt.now); held != tt.held {
				t.Errorf("held = %v, want %v", held, tt.held)
			}
			b.Next(key, tt.started, tt.finished)
			if got := b[key]; got.Delay != tt.next || !got.Until.Equal(tt.finished.Add(tt.next)) {
				t.Errorf("entry %+v, want delay %v until %v", got, tt.next, tt.finished.Add(tt.next))
			}
		})
	}
}

// TestComputePlanBackoffCopy checks ComputePlan neither changes the back-off it is
// given nor keeps entries of containers no longer in the spec.
func TestComputePlanBackoffCopy(t *testing.T) {
	pod := testPod("web", "default", "u1")
	pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
	key := BackoffKey("web", HashContainer(&pod.Spec.Containers[0]))
	in := Backoff{key: {Delay: 20 * time.Second, Until: t0}, "old_12345678": {Delay: time.Minute, Until: t0}}
	sb := ctr("sb", InfraName, runtime.StateRunning, 0, 0)
	sb.Labels[LabelHash] = SandboxHash(pod)
	w := ctr("w", "web", runtime.StateExited, time.Second, 0)
	w.Labels[LabelHash] = HashContainer(&pod.Spec.Containers[0])
	w.StartedAt, w.FinishedAt = t0, t0.Add(time.Minute)
	plan := ComputePlan(pod, Observed{Containers: []runtime.Container{sb, w}}, nil, in, t0.Add(2*time.Minute))
	if len(in) != 2 || in[key].Delay != 20*time.Second {
		t.Errorf("input back-off modified: %v", in)
	}
	if _, ok := plan.Backoff["old_12345678"]; ok || plan.Backoff[key].Delay != 40*time.Second {
		t.Errorf("plan back-off %v, want only %s with 40s", plan.Backoff, key)
	}
}
