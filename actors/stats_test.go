package actors

import (
	"context"
	"fmt"
	"testing"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func actorStats(s *System, kind string) (ActorStats, bool) {
	for _, a := range s.Stats().Actors {
		if a.Kind == kind {
			return a, true
		}
	}
	return ActorStats{}, false
}

// The scheduler counts its attempts by result and its pending pods; the actors of a
// kind count their messages, handling times and restarts.
func TestStatsCountSchedulingAndMessages(t *testing.T) {
	store := openStore(t)
	s := startScheduling(t, store, nil)
	create(t, s, st.NewNode("small").CPU("1").Obj())
	create(t, s, st.NewPod("fits-1").CPU("250m").Obj())
	create(t, s, st.NewPod("fits-2").CPU("250m").Obj())
	create(t, s, st.NewPod("too-big").CPU("2").Obj())
	waitFor(t, "two scheduled, one unschedulable and pending", func() error {
		got := s.Stats().Scheduler
		if got.Scheduled != 2 || got.Unschedulable < 1 || got.Pending != 1 || got.Errors != 0 {
			return fmt.Errorf("scheduler stats %+v", got)
		}
		if got.Attempt.Count < 3 {
			return fmt.Errorf("attempts observed %d, want at least 3", got.Attempt.Count)
		}
		return nil
	})

	pods, ok := actorStats(s, "pods")
	if !ok {
		t.Fatalf("no stats for the pods' actors in %+v", s.Stats().Actors)
	}
	// Three creates and two bindings at least, each handled and timed.
	if pods.Messages < 5 || pods.Handling.Count < 5 || pods.Restarts != 0 {
		t.Errorf("pods' actors: %+v", pods)
	}
	if n := int64(len(children(t, s, "pods"))); pods.Live != n || n == 0 {
		t.Errorf("pods' live actors counted %d, the manager has %d", pods.Live, n)
	}
	if m, _ := actorStats(s, "pods-manager"); m.Messages < 5 {
		t.Errorf("pods' manager handled %d messages, want at least 5", m.Messages)
	}
	if sc, _ := actorStats(s, "scheduler-shard"); sc.Messages == 0 {
		t.Errorf("shards handled no message")
	}

	if err := s.InjectPanic(context.Background(), podKey("default", "fits-1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restart counted", func() error {
		if p, _ := actorStats(s, "pods"); p.Restarts != 1 {
			return fmt.Errorf("restarts = %d", p.Restarts)
		}
		return nil
	})
	// Deleted objects' actors stop: what was posted to them was received.
	for _, name := range []string{"fits-2", "too-big"} {
		if _, _, err := s.Delete(context.Background(), podKey("default", name), DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "nothing pending", func() error {
		if p := s.Stats().Scheduler.Pending; p != 0 {
			return fmt.Errorf("pending = %d", p)
		}
		return nil
	})
	waitFor(t, "mailboxes drained", func() error {
		for _, a := range s.Stats().Actors {
			if a.MailboxDepth != 0 {
				return fmt.Errorf("%s: mailbox depth %d", a.Kind, a.MailboxDepth)
			}
		}
		return nil
	})
}
