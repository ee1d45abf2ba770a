package persistence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

// nextN reads from w until it has n events, failing after a deadline.
func nextN(t testing.TB, w *Watcher, n int) []Event {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []Event
	for len(out) < n {
		evs, err := w.Next(c)
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(out), n, err)
		}
		out = append(out, evs...)
	}
	if len(out) != n {
		t.Fatalf("got %d events, want %d", len(out), n)
	}
	return out
}

type seen struct {
	typ  EventType
	name string
	rev  int64
}

func summary(evs []Event) []seen {
	out := make([]seen, len(evs))
	for i, ev := range evs {
		out[i] = seen{ev.Type, ev.Item.Key.Namespace + "/" + ev.Item.Key.Name, ev.Item.Revision}
	}
	return out
}

func TestWatch(t *testing.T) {
	// History: 1 create a/x, 2 create b/y, 3 update a/x, 4 create node n, 5 delete a/x + create b/z.
	history := [][]Command{
		{create("a", "x")},
		{create("b", "y")},
		{update("a", "x", 1, "nginx:2")},
		{{Op: OpCreate, Key: Key{Resource: "nodes", Name: "n"}, Object: node("n")}},
		{del("a", "x"), create("b", "z")},
	}
	tests := []struct {
		name      string
		resource  string
		namespace string
		from      int64
		want      []seen
	}{
		{"all pods from 0", "pods", "", 0, []seen{{Added, "a/x", 1}, {Added, "b/y", 2}, {Modified, "a/x", 3}, {Deleted, "a/x", 5}, {Added, "b/z", 5}}},
		{"namespace a", "pods", "a", 0, []seen{{Added, "a/x", 1}, {Modified, "a/x", 3}, {Deleted, "a/x", 5}}},
		{"namespace b from 2", "pods", "b", 2, []seen{{Added, "b/z", 5}}},
		{"resume from 3", "pods", "", 3, []seen{{Deleted, "a/x", 5}, {Added, "b/z", 5}}},
		{"other resource", "nodes", "", 0, []seen{{Added, "/n", 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openMem(t, nil, 0)
			defer closeStore(t, s)
			for _, cmds := range history {
				if _, _, err := s.Apply(ctx, cmds...); err != nil {
					t.Fatal(err)
				}
			}
			w, err := s.Watch(ctx, tt.resource, tt.namespace, tt.from)
			if err != nil {
				t.Fatal(err)
			}
			got := summary(nextN(t, w, len(tt.want)))
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("event %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			// Nothing more is pending.
			c, cancel := context.WithCancel(ctx)
			cancel()
			if evs, err := w.Next(c); !errors.Is(err, context.Canceled) {
				t.Fatalf("extra events %v, err %v", summary(evs), err)
			}
		})
	}
}

func TestWatchDeletedCarriesLastState(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	applyEach(t, s, create("a", "x"), update("a", "x", 0, "nginx:last"), del("a", "x"))
	w, err := s.Watch(ctx, "pods", "", 2)
	if err != nil {
		t.Fatal(err)
	}
	ev := nextN(t, w, 1)[0]
	p := ev.Item.Object().(interface{ GetResourceVersion() string })
	if ev.Type != Deleted || ev.Item.Revision != 3 || p.GetResourceVersion() != "3" {
		t.Fatalf("delete event %s at %d with resourceVersion %s", ev.Type, ev.Item.Revision, p.GetResourceVersion())
	}
	if img := podImage(ev.Item); img != "nginx:last" {
		t.Fatalf("last state has image %q", img)
	}
}

func TestWatchCompaction(t *testing.T) {
	const window = 10
	s := openMem(t, nil, window)
	defer closeStore(t, s)
	slow, err := s.Watch(ctx, "pods", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, _, err := s.Apply(ctx, create("ns", fmt.Sprintf("p%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		from int64
		err  error
	}{
		{"from before the window", 5, ErrCompacted},
		{"just before the oldest kept", 30 - window - 1, ErrCompacted},
		{"oldest resumable", 30 - window, nil},
		{"now", 30, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := s.Watch(ctx, "pods", "", tt.from)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("watch from %d: %v, want %v", tt.from, err, tt.err)
			}
			if err == nil && tt.from < 30 {
				evs := nextN(t, w, int(30-tt.from))
				if evs[0].Item.Revision != tt.from+1 {
					t.Fatalf("first event at %d", evs[0].Item.Revision)
				}
			}
		})
	}
	t.Run("watcher behind the ring", func(t *testing.T) {
		if _, err := slow.Next(ctx); !errors.Is(err, ErrCompacted) {
			t.Fatalf("slow watcher: %v", err)
		}
	})
}

func TestWatchResumesAcrossRestart(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, 0)
	for i := range 20 {
		if _, _, err := s.Apply(ctx, create("ns", fmt.Sprintf("p%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Apply(ctx, del("ns", "p03")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = openMem(t, fs, 0)
	defer closeStore(t, s)
	w, err := s.Watch(ctx, "pods", "", 15)
	if err != nil {
		t.Fatal(err)
	}
	got := summary(nextN(t, w, 6))
	want := []seen{{Added, "ns/p15", 16}, {Added, "ns/p16", 17}, {Added, "ns/p17", 18}, {Added, "ns/p18", 19}, {Added, "ns/p19", 20}, {Deleted, "ns/p03", 21}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestConcurrentWritersAndWatchers checks under -race that every watcher sees every
// event of its namespace exactly once and in revision order.
func TestConcurrentWritersAndWatchers(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	const writers, each, watchers = 8, 40, 20
	start := s.Revision()
	type result struct {
		ns   string
		revs []int64
	}
	results := make(chan result, watchers)
	var ww sync.WaitGroup
	for i := range watchers {
		ns := ""
		if i%2 == 1 {
			ns = fmt.Sprintf("ns-%d", i%writers)
		}
		w, err := s.Watch(ctx, "pods", ns, start)
		if err != nil {
			t.Fatal(err)
		}
		want := writers * each
		if ns != "" {
			want = each
		}
		ww.Add(1)
		go func() {
			defer ww.Done()
			var revs []int64
			for _, ev := range nextN(t, w, want) {
				revs = append(revs, ev.Item.Revision)
				if ns != "" && ev.Item.Key.Namespace != ns {
					t.Errorf("watcher of %s got %s", ns, ev.Item.Key.Namespace)
				}
			}
			results <- result{ns, revs}
		}()
	}
	createConcurrently(t, s, writers, each)
	ww.Wait()
	close(results)
	for r := range results {
		for i := 1; i < len(r.revs); i++ {
			if r.revs[i] <= r.revs[i-1] {
				t.Fatalf("watcher %q: revision %d after %d", r.ns, r.revs[i], r.revs[i-1])
			}
		}
	}
}

func TestWatchEndsWithClose(t *testing.T) {
	s := openMem(t, nil, 0)
	w, err := s.Watch(ctx, "pods", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Next(ctx)
		done <- err
	}()
	closeStore(t, s)
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("next after close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watcher not woken by Close")
	}
}

// TestWatchersReadWhileCompacting: watchers read the change log while writers add to
// it and every commit compacts it (a window of 16 revisions). Each watcher sees the
// revisions after its start with no gap and in order, up to the end or up to an
// ErrCompacted once it fell out of the window; never a stale or torn event.
func TestWatchersReadWhileCompacting(t *testing.T) {
	const window, writers, each, watchers = 16, 4, 100, 8
	s := openMem(t, nil, window)
	defer closeStore(t, s)
	start := s.Revision()
	end := start + writers*each
	var ww sync.WaitGroup
	for range watchers {
		w, err := s.Watch(ctx, "pods", "", start)
		if err != nil {
			t.Fatal(err)
		}
		ww.Add(1)
		go func() {
			defer ww.Done()
			next := start + 1
			for next <= end {
				evs, err := w.Next(ctx)
				if errors.Is(err, ErrCompacted) {
					return // fell behind the window: the client relists
				}
				if err != nil {
					t.Error(err)
					return
				}
				for _, ev := range evs {
					if ev.Item.Revision != next || ev.Type != Added || ev.Item.Object() == nil {
						t.Errorf("event %s at %d, want ADDED at %d", ev.Type, ev.Item.Revision, next)
						return
					}
					next++
				}
			}
		}()
	}
	createConcurrently(t, s, writers, each)
	ww.Wait()
	if _, err := s.Watch(ctx, "pods", "", start); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch from the start after %d revisions in a window of %d: %v", writers*each, window, err)
	}
}

// createConcurrently has `writers` goroutines each create `each` pods, writer w in
// namespace ns-<w>, and returns when all are stored.
func createConcurrently(t *testing.T, s *Store, writers, each int) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, _, err := s.Apply(ctx, create(fmt.Sprintf("ns-%d", w), fmt.Sprintf("p%d", i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
