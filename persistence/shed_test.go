package persistence

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
)

// TestShedEncodings: in the change log, a version that a later change superseded
// (an update or a deletion) more than shedAge revisions ago keeps its stored JSON alone
// (no decoded object), current versions keep everything, and a watcher
// that far behind gets every event decoded again, with the JSON it would have got at
// the time.
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
	var shed, kept, current int
	for _, ev := range v.events { // the log itself: lean items hold their JSON only
		it := ev.Item
		superseded := s.latest[it.Key] != it
		wantShed := superseded && it.Revision <= line
		if gotShed := it.lean(); gotShed != wantShed {
			t.Errorf("revision %d (%s %s, superseded %v): lean %v, want %v", it.Revision, ev.Type, it.Key.Name, superseded, gotShed, wantShed)
		}
		switch {
		case wantShed:
			shed++
		case it.Revision <= line:
			current++
		default:
			kept++
		}
	}
	s.mu.RUnlock()
	old, err := s.Watch(ctx, "pods", "", v.compactRev)
	if err != nil {
		t.Fatal(err)
	}
	for seen := 0; seen < len(v.events); {
		evs, err := old.Next(ctx) // decodes the lean items again
		if err != nil {
			t.Fatal(err)
		}
		seen += len(evs)
		for _, ev := range evs {
			it := ev.Item
			if it.Object() == nil {
				t.Fatalf("revision %d: watched without its object", it.Revision)
			}
			if got := string(it.JSON()); got != sent[it.Revision] {
				t.Errorf("revision %d: JSON\n%s\nwant\n%s", it.Revision, got, sent[it.Revision])
			}
			if got, err := marshalJSON(it.Object()); err != nil || string(got) != sent[it.Revision] {
				t.Errorf("revision %d: the object watched encodes as\n%s (%v)\nwant\n%s", it.Revision, got, err, sent[it.Revision])
			}
			if it.uid == "" {
				t.Errorf("revision %d: watched without its uid", it.Revision)
			}
		}
	}
	if shed == 0 || kept == 0 || current == 0 {
		t.Errorf("shed %d, kept %d (newer half), current in the older half %d: want some of each", shed, kept, current)
	}
}

// TestShedLateSupersede: a version still current when the shed line passed it is
// shed at the next shedding once a later change supersedes it, not kept decoded
// until compaction (a pod created, then bound long after).
func TestShedLateSupersede(t *testing.T) {
	const window = 64
	s := openMem(t, nil, window)
	defer closeStore(t, s)
	apply := func(c Command) { applyEach(t, s, c) }
	apply(create("ns", "late")) // revision 1
	apply(create("ns", "busy"))
	for i := range window / 2 { // the line passes it while it is current
		apply(update("ns", "busy", 0, fmt.Sprintf("nginx:1.%d", i)))
	}
	lean := func() bool {
		v := s.changes.Load()
		return v.events[0].Item.Revision == 1 && v.events[0].Item.lean()
	}
	if lean() {
		t.Fatal("revision 1 shed while current")
	}
	apply(update("ns", "late", 0, "nginx:2"))
	for i := range window / 8 {
		apply(update("ns", "busy", 0, fmt.Sprintf("nginx:3.%d", i)))
	}
	if !lean() {
		t.Fatal("revision 1, superseded and past the shed line, still decoded in the log")
	}
}

// TestReopenKeepsOldVersionsLean: after a restart the change log's older versions
// are loaded as their JSON alone, and a watch from before them still gets every
// event, decoded, with the bytes it had before the restart.
func TestReopenKeepsOldVersionsLean(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, 0)
	applyEach(t, s,
		create("ns", "a"), create("ns", "b"),
		update("ns", "a", 0, "nginx:1"), update("ns", "a", 0, "nginx:2"),
		del("ns", "b"), create("ns", "b"),
	)
	read := func(s *Store) []string {
		t.Helper()
		w, err := s.Watch(ctx, "pods", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := w.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range evs {
			js, err := marshalJSON(ev.Item.Object())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s %d %s | %s", ev.Type, ev.Item.Revision, ev.Item.JSON(), js))
		}
		return out
	}
	before := read(s)
	closeStore(t, s)

	s = openMem(t, fs, 0)
	defer closeStore(t, s)
	lean := 0
	for _, ev := range s.changes.Load().events {
		switch current := s.latest[ev.Item.Key] == ev.Item; {
		case current && ev.Item.lean():
			t.Errorf("revision %d: current, but not decoded", ev.Item.Revision)
		case !current && !ev.Item.lean():
			t.Errorf("revision %d: superseded, but decoded at load", ev.Item.Revision)
		case !current:
			lean++
		}
	}
	if lean != 4 { // a's first two versions, b's first and its deletion
		t.Errorf("%d lean versions after the restart, want 4", lean)
	}
	if after := read(s); !slices.Equal(after, before) {
		t.Errorf("watched after the restart:\n%s\nbefore:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}

// TestShedDeleted: a deleted object's last version and its deletion are shed once
// past the shed line, as any superseded version is, and the list of versions
// waiting to be shed empties.
func TestShedDeleted(t *testing.T) {
	const window = 64
	s := openMem(t, nil, window)
	defer closeStore(t, s)
	apply := func(c Command) { applyEach(t, s, c) }
	apply(create("ns", "gone")) // revision 1
	apply(del("ns", "gone"))    // 2
	apply(create("ns", "busy"))
	for i := range window / 2 {
		apply(update("ns", "busy", 0, fmt.Sprintf("nginx:1.%d", i)))
	}
	v := s.changes.Load()
	for _, ev := range v.events {
		if ev.Item.Revision <= 2 && !ev.Item.lean() {
			t.Errorf("revision %d (%s) still decoded past the shed line", ev.Item.Revision, ev.Type)
		}
	}
	s.mu.Lock()
	waiting := len(s.superseded)
	s.mu.Unlock()
	if waiting > window/8+int(s.compactStep) {
		t.Errorf("%d versions wait to be shed: more than the revisions since the shed line", waiting)
	}
}
