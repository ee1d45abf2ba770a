package replication

import (
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/actors/control"
)

// fakeEffects answers what a controller asks of its actor's bookkeeping; any other
// call panics (the embedded nil interface), so a test sees what it touched.
type fakeEffects struct {
	control.Effects
	outstanding int
}

func (f fakeEffects) Outstanding() int { return f.outstanding }

// TestResyncLater: a resync from the pod feed waits while the RC awaits the answers
// to its writes with expectations pending (the last answer settles it), and is then
// owed; otherwise it is queued at once.
func TestResyncLater(t *testing.T) {
	for _, tt := range []struct {
		name        string
		outstanding int
		creates     []string
		later       bool
	}{
		{"creates answered one by one", 3, []string{"web-a", "web-b", "web-c"}, true},
		{"nothing awaited", 0, nil, false},
		{"only an owner patch awaited", 1, nil, false},
		{"an answer lost: nothing outstanding", 0, []string{"web-a"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Controller{exp: Expectations{Creates: tt.creates, Set: time.Now()}}
			if got := c.ResyncLater(fakeEffects{outstanding: tt.outstanding}); got != tt.later {
				t.Fatalf("resync later = %v, want %v", got, tt.later)
			}
			if c.owed != tt.later {
				t.Fatalf("owed = %v, want %v", c.owed, tt.later)
			}
		})
	}
}
