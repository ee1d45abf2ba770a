package memory

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// metric reads one uint64 runtime metric.
func metric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// keep is live heap for the collections in TestStart to find.
var keep []byte

func TestStart(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		p           Policy
		grow        int // bytes made live after Start
		wantPercent uint64
		wantLimit   uint64
	}{
		{name: "headroom smaller than the least share: the least",
			p: Policy{MaxPercent: 400, MinPercent: 20, Headroom: 1, Limit: 1 << 40}, wantPercent: 20, wantLimit: 1 << 40},
		// 32 MiB over a live heap of little more than 128 MiB: 24 or 25%, set after
		// the collection that finds the heap grown (at Start it is 400).
		{name: "the live heap grows past the headroom",
			p: Policy{MaxPercent: 400, MinPercent: 10, Headroom: 32 << 20}, grow: 128 << 20, wantPercent: 24, wantLimit: math.MaxInt64},
		{name: "no headroom: the most, no limit",
			p: Policy{MaxPercent: 300, MinPercent: 20}, wantPercent: 300, wantLimit: math.MaxInt64},
		{name: "the environment wins",
			env: map[string]string{"GOGC": "100", "GOMEMLIMIT": "1TiB"},
			p:   Policy{MaxPercent: 400, MinPercent: 20, Headroom: 1, Limit: 1 << 30}, wantPercent: 150, wantLimit: math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.env["GOGC"])
			t.Setenv("GOMEMLIMIT", tt.env["GOMEMLIMIT"])
			prevPercent, prevLimit := debug.SetGCPercent(150), debug.SetMemoryLimit(math.MaxInt64)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(func() {
				cancel()
				keep = nil
				debug.SetGCPercent(prevPercent)
				debug.SetMemoryLimit(prevLimit)
			})
			keep = nil
			runtime.GC()
			Start(ctx, tt.p, logrus.New())
			keep = make([]byte, tt.grow)
			// The percent is set again after each collection, for the heap it found live.
			poll.Until(t, 10*time.Second, "the policy's GC percent", func() error {
				runtime.GC()
				// The live heap is keep and the test binary's own: a percent or two
				// under what keep alone gives.
				if got := metric("/gc/gogc:percent"); got != tt.wantPercent && got != tt.wantPercent+1 {
					return fmt.Errorf("GC percent %d, want %d", got, tt.wantPercent)
				}
				return nil
			})
			if got := metric("/gc/gomemlimit:bytes"); got != tt.wantLimit {
				t.Errorf("memory limit %d, want %d", got, tt.wantLimit)
			}
		})
	}
}
