package persistence

import (
	"context"
	"testing"
)

func TestHistogramBuckets(t *testing.T) {
	h := NewHistogram(10, 1, 5) // bounds are sorted
	for _, v := range []int64{0, 1, 2, 5, 6, 10, 11, 100} {
		h.Observe(v)
	}
	got := h.Snapshot()
	want := HistogramSnapshot{Upper: []int64{1, 5, 10}, Cumulative: []uint64{2, 4, 6}, Count: 8, Sum: 135}
	if len(got.Upper) != 3 || got.Count != want.Count || got.Sum != want.Sum {
		t.Fatalf("snapshot = %+v, want %+v", got, want)
	}
	for i := range want.Upper {
		if got.Upper[i] != want.Upper[i] || got.Cumulative[i] != want.Cumulative[i] {
			t.Fatalf("snapshot = %+v, want %+v", got, want)
		}
	}
}

func TestStatsCountObjectsAndCommits(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c"} {
		if _, _, err := s.Apply(ctx, create("default", name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Apply(ctx, Command{Op: OpCreate, Key: Key{Resource: "nodes", Name: "n1"}, Object: node("n1")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Apply(ctx, Command{Op: OpDelete, Key: podKey("default", "b")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Apply(ctx, create("default", "a")); err == nil { // rejected: still measured
		t.Fatal("second create of a: no error")
	}
	st := s.Stats()
	if st.Objects["pods"] != 2 || st.Objects["nodes"] != 1 {
		t.Errorf("objects = %v, want 2 pods and 1 node", st.Objects)
	}
	if st.Apply.Count != 6 {
		t.Errorf("apply count = %d, want 6", st.Apply.Count)
	}
	// Five accepted transactions, committed in at most five groups, each synced once.
	if st.Fsync.Count == 0 || st.Fsync.Count > 5 || st.GroupSize.Count != st.Fsync.Count {
		t.Errorf("fsyncs = %d, groups = %d", st.Fsync.Count, st.GroupSize.Count)
	}
	if st.GroupSize.Sum < 5 {
		t.Errorf("transactions in groups = %d, want at least 5", st.GroupSize.Sum)
	}
}
