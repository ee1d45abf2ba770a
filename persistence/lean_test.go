package persistence

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// leanAll makes every current item lean: the first sweep forgets the reads so far,
// the second drops what no one read since.
func leanAll(s *Store) {
	s.sweepDecoded()
	s.sweepDecoded()
}

// TestSweepDecoded: a current object no one read for a whole sweep period goes lean,
// one read since the last sweep stays decoded, and a lean one reads back as the
// object that was stored (decoded again from its JSON, once) for every reader:
// Get, a snapshot, Related, a watch, an update and a delete of it.
func TestSweepDecoded(t *testing.T) {
	type step struct {
		do   func(s *Store)
		lean map[string]bool // after do: pod name -> lean
	}
	read := func(name string) func(s *Store) {
		return func(s *Store) {
			it, err := s.Get(podKey("ns", name))
			if err != nil {
				t.Fatal(err)
			}
			it.Object()
		}
	}
	sweep := func(s *Store) { s.sweepDecoded() }
	then := func(fns ...func(s *Store)) func(s *Store) {
		return func(s *Store) {
			for _, fn := range fns {
				fn(s)
			}
		}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"written objects were just read: the first sweep keeps them", []step{
			{do: sweep, lean: map[string]bool{"a": false, "b": false}},
		}},
		{"two sweeps without a read: lean", []step{
			{do: then(sweep, sweep), lean: map[string]bool{"a": true, "b": true}},
		}},
		{"a read between sweeps keeps one decoded", []step{
			{do: then(sweep, read("a"), sweep), lean: map[string]bool{"a": false, "b": true}},
			{do: sweep, lean: map[string]bool{"a": true, "b": true}},
		}},
		{"a lean item read is decoded again and kept", []step{
			{do: then(sweep, sweep, read("b")), lean: map[string]bool{"a": true, "b": false}},
			{do: sweep, lean: map[string]bool{"a": true, "b": false}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openLean(t, -1)
			defer closeStore(t, s)
			applyEach(t, s, create("ns", "a"), create("ns", "b"))
			for i, st := range tt.steps {
				st.do(s)
				for name, want := range st.lean {
					it, err := s.Get(podKey("ns", name))
					if err != nil {
						t.Fatal(err)
					}
					if got := it.lean(); got != want {
						t.Errorf("step %d: %s lean %v, want %v", i, name, got, want)
					}
				}
			}
		})
	}
}

// openLean opens an in-memory store that sweeps every leanAfter (negative: never,
// the test sweeps).
func openLean(t testing.TB, leanAfter time.Duration) *Store {
	t.Helper()
	s, err := Open(Options{InMemory: true, NewObject: newObject, LeanAfter: leanAfter})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSweeperRuns: the store sweeps by itself every LeanAfter.
func TestSweeperRuns(t *testing.T) {
	s := openLean(t, 10*time.Millisecond)
	defer closeStore(t, s)
	applyEach(t, s, create("ns", "a"))
	for deadline := time.Now().Add(10 * time.Second); ; {
		it, err := s.Get(podKey("ns", "a"))
		if err != nil {
			t.Fatal(err)
		}
		if it.lean() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a pod no one reads still decoded after 10 s of sweeps every 10 ms")
		}
		runtime.Gosched()
	}
}

// TestLeanItemsReadBack: every way of reading a lean current object gives back what
// was stored, and writes over it (an update, a delete) behave as over a decoded one.
func TestLeanItemsReadBack(t *testing.T) {
	s := openLean(t, -1)
	defer closeStore(t, s)
	applyEach(t, s, create("ns", "a"), create("ns", "b"), create("ns", "c"))
	want := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		it, _ := s.Get(podKey("ns", n))
		want[n] = string(it.JSON())
	}
	same := func(how string, it *Item) {
		t.Helper()
		js, err := marshalJSON(it.Object())
		if err != nil || string(js) != want[it.Key.Name] {
			t.Errorf("%s %s: reads back as\n%s (%v)\nwant\n%s", how, it.Key.Name, js, err, want[it.Key.Name])
		}
	}
	leanAll(s)
	if got := s.Stats().Lean; got != 3 {
		t.Errorf("Stats().Lean = %d after two sweeps, want 3", got)
	}
	sn := s.Snapshot("pods")
	n := 0
	sn.Ascend("", "", func(it *Item) bool {
		if !it.lean() {
			t.Errorf("snapshot %s: not lean after two sweeps", it.Key.Name)
		}
		same("snapshot", it)
		n++
		return true
	})
	if n != 3 {
		t.Fatalf("snapshot of %d pods, want 3", n)
	}
	leanAll(s)
	w, err := s.Watch(context.Background(), "pods", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := w.Next(context.Background())
	if err != nil || len(evs) != 3 {
		t.Fatalf("watch: %d events, %v", len(evs), err)
	}
	for _, ev := range evs {
		same("watch", ev.Item)
	}
	leanAll(s)
	// An update of a lean pod (its owners and claims are read from the old version
	// without decoding it for good), then a delete of a lean one.
	cur, _ := s.Get(podKey("ns", "a"))
	up := update("ns", "a", cur.Revision, "nginx:2")
	if _, _, err := s.Apply(context.Background(), up); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(podKey("ns", "a")); podImage(got) != "nginx:2" {
		t.Errorf("after the update of a lean pod: image %s", podImage(got))
	}
	if _, _, err := s.Apply(context.Background(), del("ns", "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(podKey("ns", "b")); err == nil {
		t.Error("b still there after its delete")
	}
	if c, _ := s.Get(podKey("ns", "c")); !c.lean() {
		t.Error("c, untouched, decoded again by the writes beside it")
	}
}

// TestLeanUnderConcurrency: readers, writers and sweeps at once (run with -race):
// every object read is the one its JSON encodes.
func TestLeanUnderConcurrency(t *testing.T) {
	s := openLean(t, -1)
	defer closeStore(t, s)
	const pods = 20
	for i := range pods {
		applyEach(t, s, create("ns", fmt.Sprint("p", i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // sweeps as fast as it can
		defer wg.Done()
		for ctx.Err() == nil {
			s.sweepDecoded()
		}
	}()
	errs := make(chan error, 8)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				it, err := s.Get(podKey("ns", fmt.Sprint("p", (i+r)%pods)))
				if err != nil {
					errs <- err
					return
				}
				js, err := marshalJSON(it.Object())
				if err != nil || string(js) != string(it.JSON()) {
					errs <- fmt.Errorf("%s at %d reads as %s (%v), stored %s", it.Key.Name, it.Revision, js, err, it.JSON())
					return
				}
				if _, ok := it.Object().(*corev1.Pod); !ok {
					errs <- fmt.Errorf("%s: %T", it.Key.Name, it.Object())
					return
				}
			}
		}()
	}
	for i := range 300 {
		name := fmt.Sprint("p", i%pods)
		cur, err := s.Get(podKey("ns", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Apply(ctx, update("ns", name, cur.Revision, fmt.Sprint("nginx:", i))); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSweepReachesSnapshots: an older version that a retained snapshot holds (the
// current one has moved on) goes lean like a current one, and the sweep expires the
// snapshots past their time even when no one takes a new one.
func TestSweepReachesSnapshots(t *testing.T) {
	s := openLean(t, -1)
	defer closeStore(t, s)
	applyEach(t, s, create("ns", "a"))
	sn := s.ListSnapshot("pods") // retained for list continuation
	var old *Item
	sn.Ascend("", "", func(it *Item) bool { old = it; return false })
	cur, _ := s.Get(podKey("ns", "a"))
	applyEach(t, s, update("ns", "a", cur.Revision, "nginx:2"))
	if old.lean() {
		t.Fatal("lean before any sweep")
	}
	leanAll(s)
	if !old.lean() {
		t.Fatal("the version the snapshot holds is still decoded after two sweeps")
	}
	if got := podImage(old); got != "nginx:1.7.9" {
		t.Fatalf("the snapshot's version reads back with image %s", got)
	}

	defer func(f func() time.Time) { now = f }(now)
	later := time.Now().Add(snapshotTTL + time.Minute)
	now = func() time.Time { return later }
	s.sweepDecoded()
	s.mu.RLock()
	retained := len(s.snaps)
	s.mu.RUnlock()
	if retained != 0 {
		t.Fatalf("%d snapshots retained past their time after a sweep, want 0", retained)
	}
}
