package persistence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
)

// TestApplyTiming: an Apply asked for its timing (WithTiming) reports its revision,
// its group and the steps it took: the fsync on a store of one, the replication on
// the leader of three, the forwarding on a follower; concurrent writers each get
// their own; a rejected transaction reports no revision.
func TestApplyTiming(t *testing.T) {
	single := func(t *testing.T) *Store {
		s := openMem(t, vfs.NewMem(), 0)
		t.Cleanup(func() { closeStore(t, s) })
		return s
	}
	leader := func(t *testing.T) *Store {
		_, ls := newCluster(t, 3, nil).leader()
		return ls
	}
	follower := func(t *testing.T) *Store {
		c := newCluster(t, 3, nil)
		c.leader()
		return c.followers()[0]
	}
	const one, lead, follow = "one", "leader", "follower"
	cases := []struct {
		name    string
		open    func(*testing.T) *Store
		writers int
		mode    string
	}{
		{"store of one", single, 1, one},
		{"store of one, 16 concurrent writers", single, 16, one},
		{"leader of three", leader, 1, lead},
		{"leader of three, 16 concurrent writers", leader, 16, lead},
		{"follower of three", follower, 1, follow},
		{"follower of three, 16 concurrent writers", follower, 16, follow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.open(t)
			timings := make([]ApplyTiming, tc.writers)
			revs := make([]int64, tc.writers)
			var wg sync.WaitGroup
			for w := range tc.writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					revs[w], _, err = s.Apply(WithTiming(context.Background(), &timings[w]), create("default", fmt.Sprintf("p%d", w)))
					if err != nil {
						t.Errorf("writer %d: %v", w, err)
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			for w, tm := range timings {
				if tm.Revision != revs[w] || tm.Start.IsZero() || tm.Queued < 0 || tm.Apply <= 0 {
					t.Errorf("writer %d (revision %d): %+v", w, revs[w], tm)
				}
				if tc.mode == follow {
					if !tm.Forwarded || tm.Forward <= 0 || tm.Group != 0 || tm.Replicate != 0 || tm.Fsync != 0 {
						t.Errorf("writer %d: %+v, want forwarded, forward > 0 and no step on this replica", w, tm)
					}
					continue
				}
				if tm.Group < 1 || tm.Group > tc.writers || tm.Forwarded || tm.Forward != 0 {
					t.Errorf("writer %d: group %d forwarded %v %v", w, tm.Group, tm.Forwarded, tm.Forward)
				}
				if tc.mode == lead && (tm.Replicate <= 0 || tm.Fsync != 0) {
					t.Errorf("writer %d: replicate %v fsync %v, want replicate > 0 and no fsync of its own", w, tm.Replicate, tm.Fsync)
				}
				if tc.mode == one && (tm.Fsync <= 0 || tm.Replicate != 0) {
					t.Errorf("writer %d: fsync %v replicate %v, want fsync > 0 and no replication", w, tm.Fsync, tm.Replicate)
				}
			}

			// Rejected: no revision, but it went through the committer (the leader's).
			var tm ApplyTiming
			if _, _, err := s.Apply(WithTiming(context.Background(), &tm), create("default", "p0")); !errors.Is(err, ErrAlreadyExists) {
				t.Fatalf("second create: %v, want ErrAlreadyExists", err)
			}
			if tm.Revision != 0 || tm.Start.IsZero() || (tc.mode == follow) != tm.Forwarded || (tc.mode != follow && tm.Group < 1) {
				t.Errorf("rejected: %+v", tm)
			}
			// Without WithTiming nothing is asked: Apply works as before.
			if _, _, err := s.Apply(context.Background(), create("default", "untimed")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkApplyTiming: a store of one, with and without the timing asked for
// (allocations per Apply are the figure to compare).
func BenchmarkApplyTiming(b *testing.B) {
	for _, timed := range []bool{false, true} {
		b.Run(fmt.Sprintf("timed=%v", timed), func(b *testing.B) {
			s := openMem(b, vfs.NewMem(), 0)
			defer closeStore(b, s)
			ctx := context.Background()
			var tm ApplyTiming
			if timed {
				ctx = WithTiming(ctx, &tm)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, _, err := s.Apply(ctx, create("default", fmt.Sprintf("b%d", i))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
