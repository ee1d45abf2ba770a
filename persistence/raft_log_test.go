package persistence

import (
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/persistence/command"
)

func openRaftLog(t *testing.T, fs vfs.FS) (*pebble.DB, *raftLog) {
	t.Helper()
	if err := makeDurableDir(fs, "db"); err != nil {
		t.Fatal(err)
	}
	db, err := pebble.Open("db", &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	l, err := newRaftLog(db)
	if err != nil {
		t.Fatal(err)
	}
	return db, l
}

func TestRaftLogStoresReadsAndTruncates(t *testing.T) {
	fs := vfs.NewStrictMem()
	db, l := openRaftLog(t, fs)
	at := time.Unix(1700000000, 5)
	var logs []*raft.Log
	for i := uint64(1); i <= 10; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: []byte{byte(i)}, AppendedAt: at})
	}
	if err := l.StoreLogs(logs[:5]); err != nil {
		t.Fatal(err)
	}
	if err := l.StoreLog(logs[5]); err != nil {
		t.Fatal(err)
	}
	if err := l.StoreLogs(logs[6:]); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		del         [2]uint64 // range deleted before the checks (zero: none)
		first, last uint64
		present     []uint64
		missing     []uint64
	}{
		{name: "all stored", first: 1, last: 10, present: []uint64{1, 5, 10}, missing: []uint64{0, 11}},
		{name: "prefix compacted", del: [2]uint64{1, 4}, first: 5, last: 10, present: []uint64{5, 10}, missing: []uint64{1, 4}},
		{name: "suffix truncated", del: [2]uint64{9, 10}, first: 5, last: 8, present: []uint64{8}, missing: []uint64{9, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.del[1] > 0 {
				if err := l.DeleteRange(tt.del[0], tt.del[1]); err != nil {
					t.Fatal(err)
				}
			}
			if f, _ := l.FirstIndex(); f != tt.first {
				t.Fatalf("first %d, want %d", f, tt.first)
			}
			if last, _ := l.LastIndex(); last != tt.last {
				t.Fatalf("last %d, want %d", last, tt.last)
			}
			for _, i := range tt.present {
				var got raft.Log
				if err := l.GetLog(i, &got); err != nil {
					t.Fatalf("get %d: %v", i, err)
				}
				if got.Index != i || got.Term != 2 || got.Type != raft.LogCommand || len(got.Data) != 1 ||
					got.Data[0] != byte(i) || !got.AppendedAt.Equal(at) {
					t.Fatalf("get %d: %+v", i, got)
				}
			}
			for _, i := range tt.missing {
				var got raft.Log
				if err := l.GetLog(i, &got); !errors.Is(err, raft.ErrLogNotFound) {
					t.Fatalf("get %d: %v, want ErrLogNotFound", i, err)
				}
			}
		})
	}
	// Synced: what was stored survives a crash (unsynced data dropped).
	fs.SetIgnoreSyncs(true)
	fs.ResetToSyncedState()
	_ = db.Close()
	fs.SetIgnoreSyncs(false)
	db2, l2 := openRaftLog(t, fs)
	defer db2.Close()
	if f, _ := l2.FirstIndex(); f != 5 {
		t.Fatalf("first after a crash %d, want 5", f)
	}
	if last, _ := l2.LastIndex(); last != 8 {
		t.Fatalf("last after a crash %d, want 8", last)
	}
}

func TestRaftStableStoreMissingKeyIsNotFound(t *testing.T) {
	db, l := openRaftLog(t, vfs.NewMem())
	defer db.Close()
	// hashicorp/raft tells a missing key by the error's text.
	if _, err := l.GetUint64([]byte("CurrentTerm")); err == nil || err.Error() != "not found" {
		t.Fatalf("missing uint64: %v", err)
	}
	if _, err := l.Get([]byte("LastVoteCand")); err == nil || err.Error() != "not found" {
		t.Fatalf("missing value: %v", err)
	}
	if err := l.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := l.Set([]byte("LastVoteCand"), []byte("m2")); err != nil {
		t.Fatal(err)
	}
	if v, err := l.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("uint64: %d %v", v, err)
	}
	if v, err := l.Get([]byte("LastVoteCand")); err != nil || string(v) != "m2" {
		t.Fatalf("value: %q %v", v, err)
	}
	existing, err := raft.HasExistingState(l, l, raft.NewInmemSnapshotStore())
	if err != nil || !existing {
		t.Fatalf("existing state: %v %v", existing, err)
	}
}

func TestEntryEncodingRoundTrip(t *testing.T) {
	up := pod("ns", "b")
	group := []*request{
		{cmds: []Command{create("ns", "a")}},
		{cmds: []Command{
			{Op: OpUpdate, Key: podKey("ns", "b"), Object: up, Pre: command.Preconditions{UID: "u-b", ResourceVersion: 42}},
			{Op: OpDelete, Key: podKey("ns", "c")},
		}},
	}
	for _, r := range group {
		r.enc = make([]encoded, len(r.cmds))
		r.uids = make([]types.UID, len(r.cmds))
		for i, c := range r.cmds {
			if c.Object != nil {
				var err error
				if r.enc[i], err = preEncode(c.Object); err != nil {
					t.Fatal(err)
				}
				r.uids[i] = types.UID("uid-" + c.Key.Name)
			}
		}
	}
	o := entryOrigin{name: "m1", inc: 99, seq: 7}
	data := encodeEntry(o, group)
	got, d, err := decodeEntryHeader(data)
	if err != nil || got != o {
		t.Fatalf("origin %+v %v", got, err)
	}
	txns, err := decodeTxns(&d)
	if err != nil {
		t.Fatal(err)
	}
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	if err := s.decodeObjects(txns); err != nil {
		t.Fatal(err)
	}
	if len(txns) != 2 || len(txns[0].cmds) != 1 || len(txns[1].cmds) != 2 {
		t.Fatalf("shape %d", len(txns))
	}
	for ti, r := range group {
		for i, c := range r.cmds {
			g := txns[ti].cmds[i]
			if g.Op != c.Op || g.Key != c.Key || g.Pre != c.Pre || txns[ti].uids[i] != r.uids[i] ||
				string(txns[ti].enc[i].json) != string(r.enc[i].json) || txns[ti].enc[i].at != r.enc[i].at {
				t.Fatalf("command %d/%d: %+v, want %+v", ti, i, g, c)
			}
			if (c.Object == nil) != (g.Object == nil) {
				t.Fatalf("command %d/%d: object %v", ti, i, g.Object)
			}
		}
	}
	// Truncated entries are refused, never half-read.
	for _, n := range []int{1, 5, len(data) / 2, len(data) - 1} {
		_, d, err := decodeEntryHeader(data[:n])
		if err == nil {
			_, err = decodeTxns(&d)
		}
		if err == nil {
			t.Fatalf("entry truncated to %d bytes decoded", n)
		}
	}
}
