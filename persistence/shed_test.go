package persistence

import (
	"fmt"
	"testing"
)

// TestShedEncodings: in the change log, a version that a later change superseded
// (an update or a deletion) more than half a window ago keeps its decoded object but
// not its encodings, current versions keep theirs, and a watcher that far behind gets
// every event with the JSON it would have got at the time.
func TestShedEncodings(t *testing.T) {
	const window = 64
	s := openMem(t, nil, window)
	defer closeStore(t, s)
	live, err := s.Watch(ctx, "pods", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[int64]string{} // revision → the JSON a watcher that kept up read
	apply := func(c Command) {
		t.Helper()
		if _, _, err := s.Apply(ctx, c); err != nil {
			t.Fatal(err)
		}
		evs, err := live.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			sent[ev.Item.Revision] = string(ev.Item.JSON())
		}
	}
	for i := range 3 * window {
		name := fmt.Sprintf("p%d", i%5)
		switch {
		case i < 5:
			apply(create("ns", name))
		case i == 2*window+20:
			// Deleted and created again: the tombstone is superseded too.
			apply(del("ns", name))
			apply(create("ns", name))
		default:
			apply(update("ns", name, 0, fmt.Sprintf("nginx:1.%d", i)))
		}
	}
	apply(create("ns", "still")) // current, and soon in the older half
	for i := range window / 2 {
		apply(update("ns", "p0", 0, fmt.Sprintf("nginx:2.%d", i)))
	}

	v := s.changes.Load()
	s.mu.RLock()
	line := s.shedRev
	s.mu.RUnlock()
	old, err := s.Watch(ctx, "pods", "", v.compactRev)
	if err != nil {
		t.Fatal(err)
	}
	var shed, kept, current int
	for seen := 0; seen < len(v.events); {
		evs, err := old.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen += len(evs)
		for _, ev := range evs {
			it := ev.Item
			s.mu.RLock()
			superseded := s.latest[it.Key] != it
			s.mu.RUnlock()
			wantShed := superseded && it.Revision <= line
			if gotShed := it.json == nil; gotShed != wantShed {
				t.Errorf("revision %d (%s %s, superseded %v): shed %v, want %v", it.Revision, ev.Type, it.Key.Name, superseded, gotShed, wantShed)
			}
			switch {
			case wantShed:
				shed++
			case it.Revision <= line:
				current++
			default:
				kept++
			}
			if got := string(it.JSON()); got != sent[it.Revision] {
				t.Errorf("revision %d: JSON\n%s\nwant\n%s", it.Revision, got, sent[it.Revision])
			}
		}
	}
	if shed == 0 || kept == 0 || current == 0 {
		t.Errorf("shed %d, kept %d (newer half), current in the older half %d: want some of each", shed, kept, current)
	}
}
