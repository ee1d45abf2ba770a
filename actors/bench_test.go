package actors

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/persistence"
)

// BenchmarkCreateParallel measures durable creates through the actor system from 64
// concurrent clients: on a store on disk (fsync, group commit) and in memory.
func BenchmarkCreateParallel(b *testing.B) {
	for _, tc := range []struct {
		name     string
		inMemory bool
	}{{"disk", false}, {"memory", true}} {
		b.Run(tc.name, func(b *testing.B) {
			opts := persistence.Options{InMemory: tc.inMemory, NewObject: newObject}
			if !tc.inMemory {
				opts.Dir = b.TempDir()
			}
			st, err := persistence.Open(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = st.Close() }()
			s, err := Start(Options{Store: st, Log: quietLog(), Resources: testResources})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Stop()
			const clients = 64
			var next atomic.Int64
			var wg sync.WaitGroup
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						name := fmt.Sprintf("p-%d", i)
						if _, err := s.Create(ctx, podKey(fmt.Sprintf("ns%d", c%8), name), newPod(fmt.Sprintf("ns%d", c%8), name).raw()); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
		})
	}
}
