package replication

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/internal/golden"
)

// scenario is the input of one testdata file: an RC, the pods its actor knows, the
// expectations left by earlier plans and pod events observed since, at a time.
type scenario struct {
	Now          time.Time                     `json:"now"`
	RC           *corev1.ReplicationController `json:"rc"`
	Pods         []*corev1.Pod                 `json:"pods,omitempty"`
	Expectations Expectations                  `json:"expectations,omitzero"`
	Events       []Event                       `json:"events,omitempty"`
}

// TestScenarios runs testdata/NAME.yaml through Decide and compares the plan with
// testdata/NAME.plan.yaml (rewritten with -rewrite). Pod names come from a counter.
func TestScenarios(t *testing.T) {
	golden.Scenarios(t, "testdata", ".plan.yaml", func(t *testing.T, sc scenario) []byte {
		exp := sc.Expectations
		for _, ev := range sc.Events {
			exp = exp.Observe(ev)
		}
		return golden.YAML(t, Decide(sc.RC, sc.Pods, exp, counter(), sc.Now))
	})
}
