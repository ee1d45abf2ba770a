package podsync

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Probe defaults (the API's).
const (
	DefaultProbePeriod      = 10 * time.Second
	defaultSuccessThreshold = 1
	defaultFailureThreshold = 3
)

// ProbeState is the state of one probe (one kind) of one container instance.
type ProbeState struct {
	Successes, Failures int  // consecutive outcomes
	Result              bool // the current verdict
	Started             bool // a probe has run
}

// InitialProbeState is the verdict before the first probe: liveness counts as
// success, readiness (and startup) as failure.
func InitialProbeState(liveness bool) ProbeState {
	return ProbeState{Result: liveness}
}

// NextProbe folds one probe outcome into st. The verdict flips to success after
// successThreshold consecutive successes and to failure after failureThreshold
// consecutive failures (defaults 1 and 3).
func NextProbe(spec *corev1.Probe, st ProbeState, ok bool) ProbeState {
	succ, fail := defaultSuccessThreshold, defaultFailureThreshold
	if spec != nil {
		if spec.SuccessThreshold > 0 {
			succ = int(spec.SuccessThreshold)
		}
		if spec.FailureThreshold > 0 {
			fail = int(spec.FailureThreshold)
		}
	}
	st.Started = true
	if ok {
		st.Successes, st.Failures = st.Successes+1, 0
		if st.Successes >= succ {
			st.Result = true
		}
	} else {
		st.Successes, st.Failures = 0, st.Failures+1
		if st.Failures >= fail {
			st.Result = false
		}
	}
	return st
}

// ProbeDue tells whether a probe should run at now for a container started at
// startedAt that was last probed at lastRun (zero for never, or before this
// instance started): at ProbeNext or later.
func ProbeDue(spec *corev1.Probe, startedAt, lastRun, now time.Time) bool {
	if spec == nil || startedAt.IsZero() {
		return false
	}
	return !now.Before(ProbeNext(spec, startedAt, lastRun))
}

// ProbeNext is when a probe is next due for a container started at startedAt and
// last probed at lastRun (zero for never, or before this instance started): not
// before initialDelaySeconds after the start, then every periodSeconds (default
// 10) after the last run.
func ProbeNext(spec *corev1.Probe, startedAt, lastRun time.Time) time.Time {
	first := startedAt
	period := DefaultProbePeriod
	if spec != nil {
		first = startedAt.Add(time.Duration(spec.InitialDelaySeconds) * time.Second)
		if spec.PeriodSeconds > 0 {
			period = time.Duration(spec.PeriodSeconds) * time.Second
		}
	}
	if lastRun.IsZero() || lastRun.Before(startedAt) {
		return first
	}
	if next := lastRun.Add(period); next.After(first) {
		return next
	}
	return first
}

// ProbeTimeout is the per-probe timeout (timeoutSeconds, default 1s).
func ProbeTimeout(spec *corev1.Probe) time.Duration {
	if spec == nil || spec.TimeoutSeconds <= 0 {
		return time.Second
	}
	return time.Duration(spec.TimeoutSeconds) * time.Second
}
