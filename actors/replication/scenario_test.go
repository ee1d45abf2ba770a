package replication

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

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
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range files {
		if strings.HasSuffix(in, ".plan.yaml") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var sc scenario
			if err := yaml.UnmarshalStrict(raw, &sc); err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			exp := sc.Expectations
			for _, ev := range sc.Events {
				exp = exp.Observe(ev)
			}
			got, err := yaml.Marshal(Decide(sc.RC, sc.Pods, exp, counter(), sc.Now))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, strings.TrimSuffix(in, ".yaml")+".plan.yaml", got)
		})
	}
}
