package persistence

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

func names(sn *Snapshot, namespace, after string, limit int) []string {
	var out []string
	sn.Ascend(namespace, after, func(it *Item) bool {
		out = append(out, it.Key.Namespace+"/"+it.Key.Name)
		return limit <= 0 || len(out) < limit
	})
	return out
}

func TestSnapshotAscend(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	applyEach(t, s, create("b", "y"), create("a", "x2"), create("a", "x1"), create("c", "z"), create("b", "w"))
	sn := s.Snapshot("pods")
	tests := []struct {
		name, namespace, after string
		limit                  int
		want                   []string
	}{
		{"all in order", "", "", 0, []string{"a/x1", "a/x2", "b/w", "b/y", "c/z"}},
		{"one namespace", "b", "", 0, []string{"b/w", "b/y"}},
		{"after a position", "", "a/x2", 0, []string{"b/w", "b/y", "c/z"}},
		{"after a missing position", "", "b/x", 0, []string{"b/y", "c/z"}},
		{"page of two", "", "a/x1", 2, []string{"a/x2", "b/w"}},
		{"namespace and after", "b", "b/w", 0, []string{"b/y"}},
		{"bare name within namespace", "a", "x1", 0, []string{"a/x2"}},
		{"after in an earlier namespace", "c", "a/x1", 0, []string{"c/z"}},
		{"after in a later namespace", "a", "c/z", 0, nil},
		{"empty namespace", "nope", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(sn, tt.namespace, tt.after, tt.limit); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	if sn.Len() != 5 || sn.Revision() != 5 {
		t.Fatalf("len %d revision %d", sn.Len(), sn.Revision())
	}
	if empty := s.Snapshot("services"); empty.Len() != 0 || names(empty, "", "", 0) != nil {
		t.Fatal("snapshot of an unknown resource is not empty")
	}
}

func TestAscendCurrent(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	applyEach(t, s, create("b", "y"), create("a", "x2"), create("a", "x1"), create("b", "w"), del("a", "x2"))
	tests := []struct {
		name, resource, namespace string
		limit                     int
		want                      []string
	}{
		{"every namespace", "pods", "", 0, []string{"a/x1", "b/w", "b/y"}},
		{"one namespace", "pods", "b", 0, []string{"b/w", "b/y"}},
		{"stops when told", "pods", "", 2, []string{"a/x1", "b/w"}},
		{"empty namespace", "pods", "c", 0, nil},
		{"unknown resource", "services", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			s.AscendCurrent(tt.resource, tt.namespace, func(it *Item) bool {
				got = append(got, it.Key.Namespace+"/"+it.Key.Name)
				return tt.limit <= 0 || len(got) < tt.limit
			})
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSnapshotIsolation(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	fill(t, s, 300)
	sn := s.Snapshot("pods")
	before := names(sn, "", "", 0)
	firstImage := ""
	sn.Ascend("", "", func(it *Item) bool { firstImage = podImage(it); return false })
	// Later writes of every kind.
	if _, _, err := s.Apply(ctx, create("ns-0", "late"), del("ns-1", "pod-00001"),
		update("ns-0", "pod-00000", 0, "changed")); err != nil {
		t.Fatal(err)
	}
	fill2 := []Command{}
	for i := range 200 {
		fill2 = append(fill2, create("zz", fmt.Sprintf("more-%03d", i)))
	}
	if _, _, err := s.Apply(ctx, fill2...); err != nil {
		t.Fatal(err)
	}
	if got := names(sn, "", "", 0); !reflect.DeepEqual(got, before) {
		t.Fatalf("snapshot changed: %d items, was %d", len(got), len(before))
	}
	sn.Ascend("", "", func(it *Item) bool {
		if podImage(it) != firstImage {
			t.Fatalf("snapshot sees the later update")
		}
		return false
	})
	if sn.Len() != 300 || sn.Revision() != 3 {
		t.Fatalf("len %d revision %d", sn.Len(), sn.Revision())
	}
	if now := s.Snapshot("pods"); now.Len() != 300+1-1+200 {
		t.Fatalf("current snapshot has %d items", now.Len())
	}
}

func TestSnapshotAt(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	fill(t, s, 100)                                                  // revision 1
	listed := s.ListSnapshot("pods")                                 // handed out at 1, retained
	s.Snapshot("pods")                                               // a scan's: not retained, reused
	if _, _, err := s.Apply(ctx, create("other", "n")); err != nil { // 2: pods change
		t.Fatal(err)
	}
	if _, _, err := s.Apply(ctx, Command{Op: OpCreate, Key: Key{Resource: "nodes", Name: "n"}, Object: node("n")}); err != nil { // 3
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		resource string
		rev      int64
		wantLen  int
		err      error
	}{
		{"handed-out snapshot", "pods", 1, 100, nil},
		{"pods unchanged since 2", "pods", 3, 101, nil},
		{"pods at 2", "pods", 2, 101, nil},
		{"nodes before they changed, never snapshotted", "nodes", 2, 0, ErrCompacted},
		{"nodes now", "nodes", 3, 1, nil},
		{"never-written resource", "services", 1, 0, nil},
		{"future", "pods", 4, 0, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sn, err := s.SnapshotAt(tt.resource, tt.rev)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err == nil && (sn.Len() != tt.wantLen || sn.Revision() != tt.rev) {
				t.Fatalf("len %d revision %d", sn.Len(), sn.Revision())
			}
		})
	}
	if listed.Len() != 100 {
		t.Fatalf("handed-out snapshot has %d items", listed.Len())
	}
	t.Run("expired after the TTL", func(t *testing.T) {
		defer func(f func() time.Time) { now = f }(now)
		later := time.Now().Add(snapshotTTL + time.Minute)
		now = func() time.Time { return later }
		if _, err := s.SnapshotAt("pods", 1); !errors.Is(err, ErrCompacted) {
			t.Fatalf("err = %v, want ErrCompacted", err)
		}
	})
}

// TestChanged: Changed moves with every create, update and delete of its resource
// and with nothing else, and after a reopen it is no earlier than the last change.
func TestChanged(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, 0)
	nodeCmd := Command{Op: OpCreate, Key: Key{Resource: "nodes", Name: "n"}, Object: node("n")}
	steps := []struct {
		name     string
		cmd      Command
		wantPods bool // the pods' Changed is this step's revision
	}{
		{"a pod created", create("ns", "a"), true},
		{"a node created", nodeCmd, false},
		{"a pod updated", update("ns", "a", 1, "changed"), true},
		{"another pod created", create("ns", "b"), true},
		{"a pod deleted", del("ns", "a"), true},
	}
	var last int64
	for _, st := range steps {
		rev, _, err := s.Apply(ctx, st.cmd)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.wantPods {
			last = rev
		}
		if got := s.Changed("pods"); got != last {
			t.Errorf("%s: pods changed at %d, want %d", st.name, got, last)
		}
	}
	if got := s.Changed("services"); got != 0 {
		t.Errorf("services changed at %d, want 0", got)
	}
	closeStore(t, s)
	s = openMem(t, fs, 0)
	defer closeStore(t, s)
	if got := s.Changed("pods"); got < last {
		t.Errorf("after a reopen: pods changed at %d, before their last change %d", got, last)
	}
}

// TestScanSnapshotsAreNotRetained: a controller's Snapshot is not kept for
// SnapshotAt (it would pin every version it holds for snapshotTTL), a list's is, and
// both reuse the last clone while the resource is unchanged.
func TestScanSnapshotsAreNotRetained(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	fill(t, s, 10) // revision 1
	scan := s.Snapshot("pods")
	if again := s.Snapshot("pods"); again.tree != scan.tree {
		t.Error("a second scan of unchanged pods cloned again")
	}
	applyEach(t, s, create("other", "n")) // 2
	s.Snapshot("pods")
	if _, err := s.SnapshotAt("pods", 1); !errors.Is(err, ErrCompacted) {
		t.Fatalf("SnapshotAt(1) after scans only: %v, want ErrCompacted", err)
	}
	listed := s.ListSnapshot("pods")
	if scanned := s.Snapshot("pods"); scanned.tree != listed.tree {
		t.Error("a scan after a list of unchanged pods cloned again")
	}
	applyEach(t, s, create("other", "m")) // 3
	if sn, err := s.SnapshotAt("pods", 2); err != nil || sn.Len() != 11 {
		t.Fatalf("SnapshotAt(2) after a list at 2: %v", err)
	}
}

// A scan's clone kept for reuse goes at the next sweep once its resource changed:
// it could not be reused, and it pinned the versions superseded since.
func TestSweepDropsStaleClones(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	fill(t, s, 3)
	scan := s.Snapshot("pods")
	s.sweepDecoded()
	if again := s.Snapshot("pods"); again.tree != scan.tree {
		t.Fatal("the sweep dropped the clone of unchanged pods")
	}
	applyEach(t, s, create("other", "n"))
	s.sweepDecoded()
	s.mu.Lock()
	_, kept := s.clones["pods"]
	s.mu.Unlock()
	if kept {
		t.Fatal("the clone of pods that changed since survived the sweep")
	}
	if scan.Len() != 3 {
		t.Errorf("the scan taken before reads %d pods, want 3", scan.Len())
	}
	if now := s.Snapshot("pods"); now.Len() != 4 {
		t.Errorf("a scan after the sweep reads %d pods, want 4", now.Len())
	}
}
