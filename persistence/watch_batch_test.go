package persistence

import (
	"fmt"
	"testing"
)

// A watcher far behind gets its events in batches of at most watchBatch, in order,
// and learns it has expired only when events it has not read leave the log.
func TestWatchBatchesAndExpiry(t *testing.T) {
	const n = 2*watchBatch + 10
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	w, err := s.Watch(ctx, "pods", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, _, err := s.Apply(ctx, create("ns", fmt.Sprintf("p%04d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var sizes []int
	var rev int64
	for total := 0; total < n; {
		evs, err := w.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Item.Revision <= rev {
				t.Fatalf("revision %d after %d", ev.Item.Revision, rev)
			}
			rev = ev.Item.Revision
		}
		sizes = append(sizes, len(evs))
		total += len(evs)
	}
	if fmt.Sprint(sizes) != fmt.Sprint([]int{watchBatch, watchBatch, 10}) {
		t.Fatalf("batches %v", sizes)
	}
	if w.Expired() {
		t.Fatal("a watcher that read everything expired")
	}

	small := openMem(t, nil, 10)
	defer closeStore(t, small)
	lag, err := small.Watch(ctx, "pods", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, _, err := small.Apply(ctx, create("ns", fmt.Sprintf("q%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if !lag.Expired() {
		t.Fatal("a watcher behind the window has not expired")
	}
}
