package persistence

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// BenchmarkReplicatedDurableCreates64 measures durable pod creates with 64 concurrent
// appliers through a three-replica Raft cluster on 127.0.0.1 (a write is acknowledged
// once committed on a majority and applied) next to a single store, in the same run:
//
//	go test -run '^$' -bench ReplicatedDurableCreates64 -benchtime 20000x ./persistence/
func BenchmarkReplicatedDurableCreates64(b *testing.B) {
	level := logrus.GetLevel()
	logrus.SetLevel(logrus.WarnLevel)
	defer logrus.SetLevel(level)
	var single, replicated float64
	b.Run("single", func(b *testing.B) {
		s, err := Open(Options{Dir: b.TempDir(), NewObject: newObject})
		if err != nil {
			b.Fatal(err)
		}
		defer closeStore(b, s)
		single = benchCreates(b, s)
	})
	b.Run("raft3", func(b *testing.B) {
		c := newCluster(b, 3, nil)
		_, ls := c.leader()
		seq0 := ls.replica.seq
		replicated = benchCreates(b, ls)
		if n := ls.replica.seq - seq0; n > 0 {
			b.ReportMetric(float64(b.N)/float64(n), "txns/entry")
		}
	})
	// The same on Pebble's in-memory filesystem: no fsync, what the protocol and the
	// CPU cost without the disk (the three replicas above share one disk).
	b.Run("single-memfs", func(b *testing.B) {
		s, err := Open(Options{InMemory: true, NewObject: newObject})
		if err != nil {
			b.Fatal(err)
		}
		defer closeStore(b, s)
		benchCreates(b, s)
	})
	b.Run("raft3-memfs", func(b *testing.B) {
		c := startCluster(b, 3, nil, true)
		_, ls := c.leader()
		benchCreates(b, ls)
	})
	if single > 0 && replicated > 0 {
		b.Logf("raft3/single: %.2f (%.0f vs %.0f creates/s)", replicated/single, replicated, single)
	}
}

// benchCreates runs b.N creates from 64 goroutines and reports creates/s.
func benchCreates(b *testing.B, s *Store) float64 {
	const writers = 64
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if _, _, err := s.Apply(context.Background(), create("default", fmt.Sprintf("pod-%d", i))); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	rate := float64(b.N) / el.Seconds()
	b.ReportMetric(rate, "creates/s")
	return rate
}

// BenchmarkRaftApplyFromFollower measures durable pod creates with 64 concurrent
// appliers on a follower, which forwards each transaction to the leader (POST
// /raft/apply) and returns once its own FSM applied it, next to the same on the
// leader, each on a fresh three-replica cluster on 127.0.0.1:
//
//	go test -run '^$' -bench RaftApplyFromFollower -benchtime 20000x ./persistence/
func BenchmarkRaftApplyFromFollower(b *testing.B) {
	level := logrus.GetLevel()
	logrus.SetLevel(logrus.WarnLevel)
	defer logrus.SetLevel(level)
	var leader, follower float64
	b.Run("leader", func(b *testing.B) {
		c := newCluster(b, 3, nil)
		_, ls := c.leader()
		leader = benchCreates(b, ls)
	})
	b.Run("follower", func(b *testing.B) {
		c := newCluster(b, 3, nil)
		c.leader()
		follower = benchCreates(b, c.followers()[0])
	})
	if leader > 0 && follower > 0 {
		b.Logf("follower/leader: %.2f (%.0f vs %.0f creates/s)", follower/leader, follower, leader)
	}
}
