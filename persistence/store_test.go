package persistence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/persistence/command"
)

var ctx = context.Background()

func update(ns, name string, rv int64, image string) Command {
	p := pod(ns, name)
	p.Spec.Containers[0].Image = image
	return Command{Op: OpUpdate, Key: podKey(ns, name), Object: p, Pre: command.Preconditions{ResourceVersion: rv}}
}

func del(ns, name string) Command { return Command{Op: OpDelete, Key: podKey(ns, name)} }

func TestApplySemantics(t *testing.T) {
	tests := []struct {
		name    string
		setup   [][]Command
		cmds    []Command
		err     error
		wantRev int64 // revision after the step
	}{
		{name: "create", cmds: []Command{create("ns", "a")}, wantRev: 1},
		{name: "create twice", setup: [][]Command{{create("ns", "a")}}, cmds: []Command{create("ns", "a")}, err: ErrAlreadyExists, wantRev: 1},
		{name: "same name other namespace", setup: [][]Command{{create("ns", "a")}}, cmds: []Command{create("other", "a")}, wantRev: 2},
		{name: "update", setup: [][]Command{{create("ns", "a")}}, cmds: []Command{update("ns", "a", 1, "nginx:2")}, wantRev: 2},
		{name: "update absent", cmds: []Command{update("ns", "a", 0, "nginx:2")}, err: ErrNotFound},
		{name: "update stale", setup: [][]Command{{create("ns", "a")}, {update("ns", "a", 0, "x")}}, cmds: []Command{update("ns", "a", 1, "y")}, err: ErrConflict, wantRev: 2},
		{name: "update wrong uid", setup: [][]Command{{create("ns", "a")}},
			cmds: []Command{{Op: OpUpdate, Key: podKey("ns", "a"), Object: pod("ns", "a"), Pre: command.Preconditions{UID: "nope"}}}, err: ErrConflict, wantRev: 1},
		{name: "delete", setup: [][]Command{{create("ns", "a")}}, cmds: []Command{del("ns", "a")}, wantRev: 2},
		{name: "delete absent", cmds: []Command{del("ns", "a")}, err: ErrNotFound},
		{name: "delete with uid", setup: [][]Command{{create("ns", "a")}},
			cmds: []Command{{Op: OpDelete, Key: podKey("ns", "a"), Pre: command.Preconditions{UID: "uid-ns-a", ResourceVersion: 1}}}, wantRev: 2},
		{name: "multi-command txn is one revision", cmds: []Command{create("ns", "a"), create("ns", "b"), create("ns", "c")}, wantRev: 1},
		{name: "object without name", cmds: []Command{{Op: OpCreate, Key: podKey("ns", "a"), Object: &corev1.Pod{}}}, err: ErrInvalid},
		{name: "object name differs from key", cmds: []Command{{Op: OpCreate, Key: podKey("ns", "a"), Object: pod("ns", "b")}}, err: ErrInvalid},
		{name: "create without object", cmds: []Command{{Op: OpCreate, Key: podKey("ns", "a")}}, err: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openMem(t, nil, 0)
			defer closeStore(t, s)
			for _, cmds := range tt.setup {
				if _, _, err := s.Apply(ctx, cmds...); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			rev, objs, err := s.Apply(ctx, tt.cmds...)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got := s.Revision(); got != tt.wantRev {
				t.Fatalf("revision = %d, want %d", got, tt.wantRev)
			}
			if err != nil {
				return
			}
			if rev != tt.wantRev || len(objs) != len(tt.cmds) {
				t.Fatalf("apply returned rev %d and %d objects", rev, len(objs))
			}
			for i, c := range tt.cmds {
				it, gerr := s.Get(c.Key)
				if c.Op == OpDelete {
					if objs[i] != nil || !errors.Is(gerr, ErrNotFound) {
						t.Fatalf("deleted %v still there: %v %v", c.Key, objs[i], gerr)
					}
					continue
				}
				if gerr != nil || it.Revision != rev || it.Object() != objs[i] {
					t.Fatalf("get %v = %+v, %v", c.Key, it, gerr)
				}
				if rv := objs[i].(*corev1.Pod).ResourceVersion; rv != strconv.FormatInt(rev, 10) {
					t.Fatalf("resourceVersion %q, want %d", rv, rev)
				}
			}
		})
	}
}

func TestRejectedTxnWritesNothing(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	if _, _, err := s.Apply(ctx, create("ns", "exists")); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "pods", "", s.Revision())
	if err != nil {
		t.Fatal(err)
	}
	fresh := pod("ns", "fresh")
	_, _, err = s.Apply(ctx, Command{Op: OpCreate, Key: podKey("ns", "fresh"), Object: fresh}, create("ns", "exists"))
	if !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("err = %v", err)
	}
	if _, err := s.Get(podKey("ns", "fresh")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("half a transaction was applied: %v", err)
	}
	if fresh.ResourceVersion != "" {
		t.Fatalf("rejected object was stamped %q", fresh.ResourceVersion)
	}
	if s.Revision() != 1 {
		t.Fatalf("revision moved to %d", s.Revision())
	}
	// The next write gets revision 2 and is the watcher's first event.
	if _, _, err := s.Apply(ctx, create("ns", "next")); err != nil {
		t.Fatal(err)
	}
	evs := nextN(t, w, 1)
	if evs[0].Item.Key.Name != "next" || evs[0].Item.Revision != 2 {
		t.Fatalf("first event %v at %d", evs[0].Item.Key, evs[0].Item.Revision)
	}
}

func TestItemJSONIsAValidObject(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns",
		// Tries to fool the resourceVersion splice.
		Annotations: map[string]string{"resourceVersion": rvPlaceholder}},
		Data: map[string]string{"k": `"resourceVersion":"` + rvPlaceholder + `"`}}
	p := pod("ns", "a")
	p.APIVersion, p.Kind = "v1", "Pod"
	applyEach(t, s,
		Command{Op: OpCreate, Key: Key{Resource: "configmaps", Namespace: "ns", Name: "cfg"}, Object: cm},
		Command{Op: OpCreate, Key: podKey("ns", "a"), Object: p},
		Command{Op: OpCreate, Key: podKey("ns", "b"), Object: pod("ns", "b")},
		Command{Op: OpDelete, Key: podKey("ns", "b")},
	)
	w, err := s.Watch(ctx, "pods", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var items []*Item
	for _, ev := range nextN(t, w, 3) {
		items = append(items, ev.Item)
	}
	it, err := s.Get(Key{Resource: "configmaps", Namespace: "ns", Name: "cfg"})
	if err != nil {
		t.Fatal(err)
	}
	items = append(items, it)
	for _, it := range items {
		t.Run(fmt.Sprintf("%s@%d", it.Key.Name, it.Revision), func(t *testing.T) {
			var got struct {
				APIVersion string            `json:"apiVersion"`
				Kind       string            `json:"kind"`
				Metadata   metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(it.JSON(), &got); err != nil {
				t.Fatal(err)
			}
			wantKind := map[string]string{"pods": "Pod", "configmaps": "ConfigMap"}[it.Key.Resource]
			if got.APIVersion != "v1" || got.Kind != wantKind {
				t.Fatalf("apiVersion %q kind %q", got.APIVersion, got.Kind)
			}
			if got.Metadata.ResourceVersion != strconv.FormatInt(it.Revision, 10) {
				t.Fatalf("json resourceVersion %q, item revision %d", got.Metadata.ResourceVersion, it.Revision)
			}
			again, err := json.Marshal(it.Object())
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(it.JSON()) {
				t.Fatalf("stored JSON differs from the object's encoding:\n%s\n%s", it.JSON(), again)
			}
		})
	}
}

func TestRevisionIsMonotonicUnderConcurrency(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	const writers, each = 16, 25
	revs := make(chan int64, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rev, _, err := s.Apply(ctx, create("ns", fmt.Sprintf("p-%d-%d", w, i)))
				if err != nil {
					t.Error(err)
					return
				}
				revs <- rev
			}
		}()
	}
	wg.Wait()
	close(revs)
	seen := map[int64]bool{}
	for r := range revs {
		if seen[r] {
			t.Fatalf("revision %d given twice", r)
		}
		seen[r] = true
	}
	for r := int64(1); r <= writers*each; r++ {
		if !seen[r] {
			t.Fatalf("revision %d missing", r)
		}
	}
	if s.Revision() != writers*each {
		t.Fatalf("revision %d", s.Revision())
	}
}

func TestReopenGivesIdenticalState(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, 0)
	fill(t, s, 250)
	if _, _, err := s.Apply(ctx, update("ns-1", "pod-00001", 0, "nginx:2"), del("ns-2", "pod-00002")); err != nil {
		t.Fatal(err)
	}
	before := dump(s)
	rev := s.Revision()
	closeStore(t, s)

	s = openMem(t, fs, 0)
	defer closeStore(t, s)
	if s.Revision() != rev {
		t.Fatalf("revision %d after reopen, want %d", s.Revision(), rev)
	}
	if after := dump(s); !reflect.DeepEqual(before, after) {
		t.Fatalf("state differs after reopen: %d vs %d objects", len(before), len(after))
	}
	// Writing continues from the same revision.
	if got, _, err := s.Apply(ctx, create("ns", "new")); err != nil || got != rev+1 {
		t.Fatalf("next write at %d (%v), want %d", got, err, rev+1)
	}
}

// dump returns every pod's JSON keyed by namespace/name, read through a snapshot.
func dump(s *Store) map[string]string {
	out := map[string]string{}
	s.Snapshot("pods").Ascend("", "", func(it *Item) bool {
		out[it.Key.Namespace+"/"+it.Key.Name] = string(it.JSON())
		return true
	})
	return out
}

func TestApplyAfterClose(t *testing.T) {
	s := openMem(t, nil, 0)
	if _, _, err := s.Apply(ctx, create("ns", "a")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	if _, _, err := s.Apply(ctx, create("ns", "b")); !errors.Is(err, ErrClosed) {
		t.Fatalf("apply after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := s.Get(podKey("ns", "a")); err != nil {
		t.Fatalf("reads after close: %v", err)
	}
}

func TestCloseCommitsQueuedWrites(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("p-%d", i)
			_, _, err := s.Apply(ctx, create("ns", name))
			switch {
			case err == nil:
				mu.Lock()
				acked[name] = true
				mu.Unlock()
			case !errors.Is(err, ErrClosed):
				t.Errorf("apply: %v", err)
			}
		}()
	}
	closeStore(t, s)
	wg.Wait()
	s = openMem(t, fs, 0)
	defer closeStore(t, s)
	if got := s.Snapshot("pods").Len(); got != len(acked) || s.Revision() != int64(len(acked)) {
		t.Fatalf("after reopen %d pods at revision %d, %d acknowledged", got, s.Revision(), len(acked))
	}
}
