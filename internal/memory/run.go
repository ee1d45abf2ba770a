package memory

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/sirupsen/logrus"
)

// liveMetric is the heap the last collection marked live.
const liveMetric = "/gc/heap/live:bytes"

// Start applies p until ctx ends: it sets the soft limit and the GC percent for the
// heap live now, then, in a goroutine of its own, sets the percent again after every
// collection for the live heap that collection found. The environment wins: with
// GOGC set the percent is left alone, with GOMEMLIMIT set the limit is.
func Start(ctx context.Context, p Policy, log logrus.FieldLogger) {
	if p.Limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(p.Limit)
	}
	if os.Getenv("GOGC") != "" {
		return
	}
	cur := p.Percent(live())
	debug.SetGCPercent(cur)
	collected := make(chan struct{}, 1)
	notifyCollections(ctx, collected)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-collected:
			}
			l := live()
			if next := p.Percent(l); next != cur {
				debug.SetGCPercent(next)
				log.WithFields(logrus.Fields{"live-mib": l >> 20, "from": cur, "to": next}).Debug("gc percent")
				cur = next
			}
		}
	}()
}

// live is the heap the last collection marked live, in bytes (0 before the first).
func live() int64 {
	s := []metrics.Sample{{Name: liveMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// sentinel is an object made only to be collected: its finalizer tells that a
// collection ran. It holds a pointer so that it is not placed in the tiny allocator,
// where it could share a block with a live object and never be collected.
type sentinel struct{ _ *int }

// notifyCollections sends on c (without blocking) after every collection until ctx
// ends: each sentinel's finalizer makes the next one.
func notifyCollections(ctx context.Context, c chan<- struct{}) {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		if ctx.Err() != nil {
			return
		}
		select {
		case c <- struct{}{}:
		default:
		}
		notifyCollections(ctx, c)
	})
}
