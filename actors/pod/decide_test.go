package pod

import (
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
