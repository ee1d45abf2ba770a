package podsync

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestNextProbe(t *testing.T) {
	tests := []struct {
		name     string
		spec     *corev1.Probe
		liveness bool
		outcomes []bool
		want     []bool // Result after each outcome
	}{
		{"liveness defaults: three failures flip", &corev1.Probe{}, true,
			[]bool{false, false, true, false, false, false, true},
			[]bool{true, true, true, true, true, false, true}},
		{"readiness defaults: one success flips", &corev1.Probe{}, false,
			[]bool{true, false, false, false},
			[]bool{true, true, true, false}},
		{"readiness success threshold 2", &corev1.Probe{SuccessThreshold: 2, FailureThreshold: 1}, false,
			[]bool{true, false, true, true, false},
			[]bool{false, false, false, true, false}},
		{"nil spec uses defaults", nil, true,
			[]bool{false, false, false},
			[]bool{true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := InitialProbeState(tt.liveness)
			if st.Started || st.Result != tt.liveness {
				t.Fatalf("initial %+v", st)
			}
			for i, ok := range tt.outcomes {
				st = NextProbe(tt.spec, st, ok)
				if !st.Started || st.Result != tt.want[i] {
					t.Errorf("after outcome %d (%v): %+v, want result %v", i, ok, st, tt.want[i])
				}
			}
		})
	}
}

func TestProbeDue(t *testing.T) {
	started := t0
	probe := &corev1.Probe{InitialDelaySeconds: 15, PeriodSeconds: 5}
	tests := []struct {
		name    string
		spec    *corev1.Probe
		started time.Time
		lastRun time.Time
		now     time.Time
		want    bool
	}{
		{"no probe", nil, started, time.Time{}, t0.Add(time.Hour), false},
		{"not started", probe, time.Time{}, time.Time{}, t0, false},
		{"initial delay", probe, started, time.Time{}, t0.Add(14 * time.Second), false},
		{"after the delay", probe, started, time.Time{}, t0.Add(15 * time.Second), true},
		{"within the period", probe, started, t0.Add(15 * time.Second), t0.Add(19 * time.Second), false},
		{"period over", probe, started, t0.Add(15 * time.Second), t0.Add(20 * time.Second), true},
		{"last run of an earlier instance", probe, started, t0.Add(-time.Second), t0.Add(16 * time.Second), true},
		{"default period 10s", &corev1.Probe{}, started, t0, t0.Add(9 * time.Second), false},
		{"default period over", &corev1.Probe{}, started, t0, t0.Add(10 * time.Second), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProbeDue(tt.spec, tt.started, tt.lastRun, tt.now); got != tt.want {
				t.Errorf("ProbeDue = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProbeNext(t *testing.T) {
	probe := &corev1.Probe{InitialDelaySeconds: 15, PeriodSeconds: 5}
	tests := []struct {
		name    string
		spec    *corev1.Probe
		lastRun time.Time
		want    time.Time
	}{
		{"first: after the delay", probe, time.Time{}, t0.Add(15 * time.Second)},
		{"then every period", probe, t0.Add(15 * time.Second), t0.Add(20 * time.Second)},
		{"last run of an earlier instance", probe, t0.Add(-time.Second), t0.Add(15 * time.Second)},
		{"never before the delay", probe, t0.Add(time.Second), t0.Add(15 * time.Second)},
		{"default period 10s", &corev1.Probe{}, t0.Add(time.Second), t0.Add(11 * time.Second)},
		{"no probe: the defaults", nil, t0, t0.Add(10 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProbeNext(tt.spec, t0, tt.lastRun); !got.Equal(tt.want) {
				t.Errorf("ProbeNext = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProbeTimeout(t *testing.T) {
	tests := []struct {
		spec *corev1.Probe
		want time.Duration
	}{{nil, time.Second}, {&corev1.Probe{}, time.Second}, {&corev1.Probe{TimeoutSeconds: 3}, 3 * time.Second}}
	for _, tt := range tests {
		if got := ProbeTimeout(tt.spec); got != tt.want {
			t.Errorf("ProbeTimeout(%+v) = %v, want %v", tt.spec, got, tt.want)
		}
	}
}
