package podsync

import (
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

var t0 = time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)

// ctr is an engine container of pod uid "u1" named name, created at t0+created.
func ctr(id, name string, state runtime.State, created time.Duration, restarts int) runtime.Container {
	p := testPod("web", "default", "u1")
	return runtime.Container{
		ID: id, Name: ContainerName(p, name, "00000000", "00000000"),
		Labels:    Labels(p, "node-1", name, "00000000", restarts),
		State:     state,
		CreatedAt: t0.Add(created),
	}
}

func TestObserved(t *testing.T) {
	unlabelled := ctr("w0", "web", runtime.StateExited, 0, 0)
	unlabelled.Labels = nil
	obs := Observed{Containers: []runtime.Container{
		ctr("w2", "web", runtime.StateExited, 2*time.Minute, 1),
		ctr("sb1", InfraName, runtime.StateExited, 0, 0),
		ctr("w3", "web", runtime.StateRunning, 3*time.Minute, 2),
		ctr("sb2", InfraName, runtime.StateRunning, time.Minute, 0),
		unlabelled,
		ctr("l1", "log", runtime.StateRunning, time.Minute, 0),
	}}
	tests := []struct {
		name             string
		latest, previous string // ids, "" for none
		restarts         int
		instances        int
	}{
		{InfraName, "sb2", "sb1", 0, 2},
		{"web", "w3", "w2", 2, 3},
		{"log", "l1", "", 0, 1},
		{"gone", "", "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := obs.Latest(tt.name)
			if ok != (tt.latest != "") || l.ID != tt.latest {
				t.Errorf("Latest = %q, %v; want %q", l.ID, ok, tt.latest)
			}
			p, ok := obs.Previous(tt.name)
			if ok != (tt.previous != "") || p.ID != tt.previous {
				t.Errorf("Previous = %q, %v; want %q", p.ID, ok, tt.previous)
			}
			if got := obs.RestartCount(tt.name); got != tt.restarts {
				t.Errorf("RestartCount = %d, want %d", got, tt.restarts)
			}
			if got := len(obs.Instances(tt.name)); got != tt.instances {
				t.Errorf("%d instances, want %d", got, tt.instances)
			}
		})
	}
	if sb, ok := obs.Sandbox(); !ok || sb.ID != "sb2" {
		t.Errorf("Sandbox = %q, %v; want sb2", sb.ID, ok)
	}
}

func TestRestartCountWithoutLabel(t *testing.T) {
	a, b := ctr("a", "web", runtime.StateExited, 0, 0), ctr("b", "web", runtime.StateRunning, time.Minute, 0)
	delete(a.Labels, LabelRestartCount)
	delete(b.Labels, LabelRestartCount)
	if got := (Observed{Containers: []runtime.Container{a, b}}).RestartCount("web"); got != 1 {
		t.Errorf("RestartCount = %d, want 1 (one earlier instance)", got)
	}
}

func TestInspectionCurrent(t *testing.T) {
	tests := []struct {
		name      string
		listed    runtime.State
		inspected runtime.State
		want      bool
	}{
		{"exited stays exited", runtime.StateExited, runtime.StateExited, true},
		{"running still running", runtime.StateRunning, runtime.StateRunning, true},
		{"running has exited", runtime.StateExited, runtime.StateRunning, false},
		{"exited was started again", runtime.StateRunning, runtime.StateExited, false},
		{"created has started", runtime.StateRunning, runtime.StateCreated, false},
		{"created not started yet", runtime.StateCreated, runtime.StateCreated, false},
		{"unknown", runtime.StateUnknown, runtime.StateUnknown, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctr("c1", "web", tt.inspected, 0, 0)
			if got := InspectionCurrent(tt.listed, c); got != tt.want {
				t.Errorf("InspectionCurrent(%v, %v) = %v, want %v", tt.listed, tt.inspected, got, tt.want)
			}
		})
	}
}
