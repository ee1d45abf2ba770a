package persistence

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// snap is what a follower saw of one snapshot call.
type snap struct {
	rev    int64
	behind bool
}

// follower records what Follow hands over and keeps a mirror of the followed objects
// (key -> revision) built from it alone.
type follower struct {
	mu     sync.Mutex
	snaps  []snap
	events []int64 // revisions, in the order delivered
	mirror map[Key]int64
	rev    int64 // the revision the mirror is at
	// onEvents, when set, runs before each batch is recorded (from Follow's goroutine).
	onEvents func()
}

func (f *follower) snapshot(sn *Snapshot, behind bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snaps = append(f.snaps, snap{sn.Revision(), behind})
	f.mirror = map[Key]int64{}
	sn.Ascend("", "", func(it *Item) bool {
		f.mirror[it.Key] = it.Revision
		return true
	})
	f.rev = sn.Revision()
}

func (f *follower) apply(evs []Event) {
	if f.onEvents != nil {
		f.onEvents()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range evs {
		if ev.Item.Revision <= f.rev {
			panic(fmt.Sprintf("event at %d after revision %d", ev.Item.Revision, f.rev))
		}
		f.events = append(f.events, ev.Item.Revision)
		if ev.Type == Deleted {
			delete(f.mirror, ev.Item.Key)
		} else {
			f.mirror[ev.Item.Key] = ev.Item.Revision
		}
		f.rev = ev.Item.Revision
	}
}

func (f *follower) at() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rev
}

// waitSnaps waits until f has had n snapshots.
func (f *follower) waitSnaps(t *testing.T, n int) {
	t.Helper()
	poll.UntilTrue(t, 10*time.Second, fmt.Sprintf("%d snapshots", n), func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.snaps) >= n
	})
}

// follow runs s.Follow in a goroutine; stop cancels it and returns its error.
func (f *follower) follow(t *testing.T, s *Store, from int64) (stop func() error) {
	t.Helper()
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Follow(fctx, "pods", from, f.snapshot, f.apply) }()
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Follow did not return after its context ended")
			return nil
		}
	}
}

// caughtUp waits until f's mirror is at the store's revision and equals the store's
// objects.
func caughtUp(t *testing.T, s *Store, f *follower) {
	t.Helper()
	poll.UntilTrue(t, 10*time.Second, "the follower to catch up", func() bool { return f.at() == s.Revision() })
	want := map[Key]int64{}
	s.Snapshot("pods").Ascend("", "", func(it *Item) bool {
		want[it.Key] = it.Revision
		return true
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if !maps.Equal(f.mirror, want) {
		t.Fatalf("mirror %v, store %v", f.mirror, want)
	}
}

func applyAll(t *testing.T, s *Store, cmds ...Command) {
	t.Helper()
	for _, c := range cmds {
		if _, _, err := s.Apply(ctx, c); err != nil {
			t.Fatalf("apply %v: %v", c.Key, err)
		}
	}
}

func creates(from, to int) []Command {
	var cmds []Command
	for i := from; i < to; i++ {
		cmds = append(cmds, create("ns", fmt.Sprintf("p%02d", i)))
	}
	return cmds
}

func TestFollow(t *testing.T) {
	tests := []struct {
		name       string
		window     int64
		before     []Command // applied before Follow starts: creates, at revisions 1, 2, ...
		from       int64
		after      []Command // applied while it follows
		wantSnaps  []snap
		wantEvents []int64
	}{
		{name: "from a snapshot", before: creates(0, 3), from: FromSnapshot,
			after:     []Command{update("ns", "p01", 2, "redis"), del("ns", "p00")},
			wantSnaps: []snap{{3, false}}, wantEvents: []int64{4, 5}},
		{name: "from a snapshot of nothing", from: FromSnapshot, after: creates(0, 2),
			wantSnaps: []snap{{0, false}}, wantEvents: []int64{1, 2}},
		{name: "from a known revision", before: creates(0, 3), from: 1,
			after:      []Command{del("ns", "p02")},
			wantEvents: []int64{2, 3, 4}},
		{name: "from now", before: creates(0, 3), from: 3, after: creates(3, 4),
			wantEvents: []int64{4}},
		{name: "from a compacted revision", window: 10, before: creates(0, 30), from: 5,
			after:     []Command{del("ns", "p29")},
			wantSnaps: []snap{{30, true}}, wantEvents: []int64{31}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openMem(t, nil, tt.window)
			defer closeStore(t, s)
			applyAll(t, s, tt.before...)
			f := &follower{mirror: map[Key]int64{}}
			if tt.from >= 0 { // the caller has the state at from: the first creates
				for i, c := range tt.before[:tt.from] {
					f.mirror[c.Key] = int64(i + 1)
				}
				f.rev = tt.from
			}
			stop := f.follow(t, s, tt.from)
			f.waitSnaps(t, len(tt.wantSnaps)) // so that the snapshots' revisions are known
			applyAll(t, s, tt.after...)
			caughtUp(t, s, f)
			if err := stop(); err != nil {
				t.Fatalf("Follow: %v", err)
			}
			if !reflect.DeepEqual(f.snaps, tt.wantSnaps) {
				t.Errorf("snapshots %v, want %v", f.snaps, tt.wantSnaps)
			}
			if !reflect.DeepEqual(f.events, tt.wantEvents) {
				t.Errorf("events %v, want %v", f.events, tt.wantEvents)
			}
		})
	}
}

// A follower that falls behind the change log's window while it follows gets a
// snapshot (behind) and goes on after it.
func TestFollowRelistsWhenBehind(t *testing.T) {
	const window = 10
	s := openMem(t, nil, window)
	defer closeStore(t, s)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f := &follower{mirror: map[Key]int64{}, onEvents: func() {
		once.Do(func() { // hold the first batch until the log has moved on
			close(entered)
			<-release
		})
	}}
	stop := f.follow(t, s, FromSnapshot)
	f.waitSnaps(t, 1)
	applyAll(t, s, creates(0, 1)...)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no events")
	}
	applyAll(t, s, creates(1, 3*window)...)
	close(release)
	caughtUp(t, s, f)
	applyAll(t, s, del("ns", "p00"))
	caughtUp(t, s, f)
	if err := stop(); err != nil {
		t.Fatalf("Follow: %v", err)
	}
	want := []snap{{0, false}, {3 * window, true}}
	if !reflect.DeepEqual(f.snaps, want) {
		t.Errorf("snapshots %v, want %v", f.snaps, want)
	}
	if wantEv := []int64{1, 3*window + 1}; !reflect.DeepEqual(f.events, wantEv) {
		t.Errorf("events %v, want %v", f.events, wantEv)
	}
}

func TestFollowReturnsWhenTheStoreCloses(t *testing.T) {
	s := openMem(t, nil, 0)
	done := make(chan error, 1)
	go func() {
		done <- s.Follow(ctx, "pods", 0, func(*Snapshot, bool) {}, func([]Event) {})
	}()
	closeStore(t, s)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return after the store closed")
	}
}
