package persistence

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// TestCrashKeepsExactlyTheAcknowledgedWrites simulates kill -9 during concurrent
// writes: from some point on fsyncs are ignored, then the process "dies" and every
// byte that was not synced is dropped. After restart every transaction acknowledged
// before that point is there, no transaction is there in part, and the revision
// counter matches the transactions that survived, with no hole.
func TestCrashKeepsExactlyTheAcknowledgedWrites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int64 // acknowledged transactions before the crash point
	}{
		{"early", 5},
		{"after many groups", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewStrictMem()
			s := openMem(t, fs, 0)
			const writers, perTxn = 8, 3
			var crashed, stop atomic.Bool
			var acks atomic.Int64
			var mu sync.Mutex
			ackedBefore := map[string]int64{} // txn -> revision, acknowledged before the crash point
			var issued []string
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						txn := fmt.Sprintf("w%d-t%d", w, i)
						cmds := make([]Command, perTxn)
						for j := range cmds {
							cmds[j] = create("ns", fmt.Sprintf("%s-%d", txn, j))
						}
						mu.Lock()
						issued = append(issued, txn)
						mu.Unlock()
						rev, _, err := s.Apply(context.Background(), cmds...)
						if err != nil {
							t.Error(err)
							return
						}
						if !crashed.Load() {
							mu.Lock()
							ackedBefore[txn] = rev
							mu.Unlock()
						}
						acks.Add(1)
					}
				}()
			}
			waitFor(t, func() bool { return acks.Load() >= tc.after })
			crashed.Store(true)
			fs.SetIgnoreSyncs(true) // from here on nothing reaches the disk for sure
			mark := acks.Load()
			waitFor(t, func() bool { return acks.Load() >= mark+20 })
			stop.Store(true)
			wg.Wait()
			closeStore(t, s) // its syncs are ignored too: this is the kill
			fs.ResetToSyncedState()
			fs.SetIgnoreSyncs(false)

			s = openMem(t, fs, 0)
			defer closeStore(t, s)
			rev := s.Revision()
			present := 0
			for _, txn := range issued {
				n, txnRev := 0, int64(-1)
				for j := range perTxn {
					if it, err := s.Get(podKey("ns", fmt.Sprintf("%s-%d", txn, j))); err == nil {
						n++
						if txnRev >= 0 && it.Revision != txnRev {
							t.Fatalf("txn %s: objects at revisions %d and %d", txn, txnRev, it.Revision)
						}
						txnRev = it.Revision
					}
				}
				if n != 0 && n != perTxn {
					t.Fatalf("txn %s half applied: %d of %d objects", txn, n, perTxn)
				}
				if want, ok := ackedBefore[txn]; ok && txnRev != want {
					t.Fatalf("acknowledged txn %s at revision %d recovered at %d", txn, want, txnRev)
				}
				if n > 0 {
					present++
					if txnRev > rev {
						t.Fatalf("txn %s at revision %d beyond recovered revision %d", txn, txnRev, rev)
					}
				}
			}
			if int64(present) != rev {
				t.Fatalf("%d transactions survive but revision is %d", present, rev)
			}
			if int64(present) < int64(len(ackedBefore)) {
				t.Fatalf("lost acknowledged writes: %d present, %d acknowledged", present, len(ackedBefore))
			}
			// The change log survives with the objects: a watch from 0 replays them all.
			w, err := s.Watch(ctx, "pods", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if evs := nextN(t, w, present*perTxn); evs[len(evs)-1].Item.Revision != rev {
				t.Fatalf("log ends at %d, revision %d", evs[len(evs)-1].Item.Revision, rev)
			}
			// And writing resumes at the next revision.
			if got, _, err := s.Apply(ctx, create("ns", "after-crash")); err != nil || got != rev+1 {
				t.Fatalf("write after restart at %d (%v), want %d", got, err, rev+1)
			}
			t.Logf("%d acknowledged before the crash point, %d survived, %d issued", len(ackedBefore), present, len(issued))
		})
	}
}

// waitFor polls cond until it holds, failing after a deadline.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	poll.UntilTrue(t, 10*time.Second, "the condition", cond)
}
