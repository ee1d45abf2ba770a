package persistentvolume

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/internal/golden"
)

// scenario is the input of one testdata file: a claim and the volumes it may bind
// to, or a volume, the claim its claimRef names and its recycler pod as observed.
type scenario struct {
	Claim    *corev1.PersistentVolumeClaim `json:"claim,omitempty"`
	Volumes  []*corev1.PersistentVolume    `json:"volumes,omitempty"`
	Volume   *corev1.PersistentVolume      `json:"volume,omitempty"`
	Recycler *corev1.Pod                   `json:"recycler,omitempty"`
}

// recyclerOptions are the scenarios' recycler pods' image and namespace.
var recyclerOptions = RecyclerOptions{Image: "kubeactor/pause:e2e", Namespace: "default"}

// TestScenarios runs testdata/NAME.yaml through DecideClaim (when it has volumes) or
// DecideVolume and compares the plan with testdata/NAME.plan.yaml (rewritten with
// -rewrite).
func TestScenarios(t *testing.T) {
	golden.Scenarios(t, "testdata", ".plan.yaml", func(t *testing.T, sc scenario) []byte {
		if sc.Volume != nil {
			return golden.YAML(t, DecideVolume(sc.Volume, sc.Claim, sc.Recycler, recyclerOptions))
		}
		return golden.YAML(t, DecideClaim(sc.Claim, sc.Volumes))
	})
}
