package pod

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestGrace(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	tests := []struct {
		name      string
		node      string
		spec      *int64
		requested *int64
		want      int64
	}{
		{name: "unbound", requested: i(10), spec: i(20), want: 0},
		{name: "bound, default", node: "n1", want: DefaultGrace},
		{name: "bound, spec", node: "n1", spec: i(20), want: 20},
		{name: "bound, requested wins", node: "n1", spec: i(20), requested: i(5), want: 5},
		{name: "bound, requested 0", node: "n1", spec: i(20), requested: i(0), want: 0},
		{name: "bound, negative is 0", node: "n1", requested: i(-3), want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: tc.node, TerminationGracePeriodSeconds: tc.spec}}
			if got := Grace(p, tc.requested); got != tc.want {
				t.Fatalf("Grace = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestMayBeTerminal: the prefilter of a pod's JSON never misses a terminal pod, and
// only a label named "phase" on a pod without a phase makes one look terminal.
func TestMayBeTerminal(t *testing.T) {
	withPhase := func(phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{}
		p.Name, p.Status.Phase = "p", phase
		return p
	}
	faked := withPhase(corev1.PodRunning)
	faked.Annotations = map[string]string{"note": `"phase":"Failed"`, `"phase":"Succeeded"`: "x"}
	labelled := withPhase(corev1.PodRunning)
	labelled.Labels = map[string]string{"phase": "Failed"}
	unphased := withPhase("")
	unphased.Labels = map[string]string{"phase": "Succeeded"}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"succeeded", withPhase(corev1.PodSucceeded), true},
		{"failed", withPhase(corev1.PodFailed), true},
		{"running", withPhase(corev1.PodRunning), false},
		{"pending", withPhase(corev1.PodPending), false},
		{"no phase", withPhase(""), false},
		{"running, with the phases in its annotations' names and values", faked, false},
		{"running, labelled phase=Failed", labelled, false},
		{"no phase, labelled phase=Succeeded: a false positive, decoded by the caller", unphased, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := json.Marshal(tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			if got := MayBeTerminal(js); got != tt.want {
				t.Fatalf("MayBeTerminal(%s) = %v, want %v", js, got, tt.want)
			}
			if Terminal(tt.pod) && !MayBeTerminal(js) {
				t.Fatal("a terminal pod filtered out")
			}
		})
	}
}
