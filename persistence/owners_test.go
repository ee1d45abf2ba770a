package persistence

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ownedPod is pod(ns, name) with the owner references refs, each "uid" or "uid!"
// for the controller.
func ownedPod(ns, name string, refs ...string) *corev1.Pod {
	p := pod(ns, name)
	for _, r := range refs {
		uid, ctl := strings.CutSuffix(r, "!")
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
			APIVersion: "v1", Kind: "ReplicationController", Name: "rc-" + uid, UID: types.UID(uid), Controller: &ctl,
		})
	}
	return p
}

// relatedByScan is what Related must return, found by reading every object.
func relatedByScan(s *Store, ns string, uid types.UID, prefix string) []string {
	var out []string
	s.Snapshot("pods").Ascend(ns, "", func(it *Item) bool {
		p := it.Object().(*corev1.Pod)
		owned := slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == uid })
		orphan := metav1.GetControllerOfNoCopy(p) == nil
		if owned || orphan || (prefix != "" && strings.HasPrefix(p.Name, prefix)) {
			out = append(out, p.Name)
		}
		return true
	})
	return out
}

func relatedNames(s *Store, ns string, uid types.UID, prefix string) []string {
	var out []string
	for _, it := range s.Related("pods", ns, uid, prefix) {
		out = append(out, it.Key.Name)
	}
	return out
}

func TestRelated(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	for _, p := range []*corev1.Pod{
		ownedPod("a", "web-1", "web!"),
		ownedPod("a", "web-2", "web!"),
		ownedPod("a", "db-1", "db!"),
		ownedPod("a", "loose", "web"),         // a reference to web, not its controller: no controller at all
		ownedPod("a", "shared", "db!", "web"), // controlled by db, referring to web
		ownedPod("a", "web-x", "db!"),         // controlled by db, named like web's pods
		ownedPod("a", "orphan"),
		ownedPod("b", "web-1", "web!"), // another namespace
	} {
		if _, _, err := s.Apply(ctx, Command{Op: OpCreate, Key: podKey(p.Namespace, p.Name), Object: p}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, ns, prefix string
		uid              types.UID
		want             []string
	}{
		{name: "owned, orphans and named", ns: "a", uid: "web", prefix: "web-", want: []string{"loose", "orphan", "shared", "web-1", "web-2", "web-x"}},
		{name: "no prefix", ns: "a", uid: "web", want: []string{"loose", "orphan", "shared", "web-1", "web-2"}},
		{name: "another controller", ns: "a", uid: "db", prefix: "db-", want: []string{"db-1", "loose", "orphan", "shared", "web-x"}},
		{name: "orphans only", ns: "a", want: []string{"loose", "orphan"}},
		{name: "another namespace", ns: "b", uid: "web", prefix: "web-", want: []string{"web-1"}},
		{name: "nothing there", ns: "c", uid: "web", prefix: "web-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := relatedNames(s, tt.ns, tt.uid, tt.prefix); !slices.Equal(got, tt.want) {
				t.Fatalf("Related = %q, want %q", got, tt.want)
			}
			if got := relatedByScan(s, tt.ns, tt.uid, tt.prefix); !slices.Equal(got, tt.want) {
				t.Fatalf("the scan = %q, want %q", got, tt.want) // the reference agrees with the table
			}
		})
	}
}

// TestRelatedFollowsWrites applies random creates, owner changes and deletes, and
// checks after each step, and after a reopen, that Related returns what a scan finds.
func TestRelatedFollowsWrites(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	uids := []string{"", "web", "web!", "db", "db!"}
	refs := func() []string {
		var out []string
		for range rng.IntN(3) {
			out = append(out, uids[1+rng.IntN(len(uids)-1)])
		}
		return out
	}
	check := func(step string) {
		t.Helper()
		for _, ns := range []string{"a", "b"} {
			for _, q := range []struct {
				uid    types.UID
				prefix string
			}{{"web", "web-"}, {"db", "db-"}, {"", ""}, {"web", ""}} {
				if got, want := relatedNames(s, ns, q.uid, q.prefix), relatedByScan(s, ns, q.uid, q.prefix); !slices.Equal(got, want) {
					t.Fatalf("%s: Related(%s, %q, %q) = %q, a scan finds %q", step, ns, q.uid, q.prefix, got, want)
				}
			}
		}
	}
	for i := range 300 {
		ns := []string{"a", "b"}[rng.IntN(2)]
		name := []string{"web-", "db-", "other-"}[rng.IntN(3)] + strconv.Itoa(rng.IntN(8))
		cur, err := s.Get(podKey(ns, name))
		var cmd Command
		switch {
		case err != nil:
			cmd = Command{Op: OpCreate, Key: podKey(ns, name), Object: ownedPod(ns, name, refs()...)}
		case rng.IntN(3) == 0:
			cmd = del(ns, name)
		default:
			cmd = Command{Op: OpUpdate, Key: podKey(ns, name), Object: ownedPod(ns, name, refs()...)}
			cmd.Pre.ResourceVersion = cur.Revision
		}
		if i%5 == 0 {
			leanAll(s) // the index drops and re-indexes lean versions too
		}
		if _, _, err := s.Apply(ctx, cmd); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		check("step " + strconv.Itoa(i))
	}
	closeStore(t, s)
	s = openMem(t, fs, 0)
	defer closeStore(t, s)
	check("after a reopen")
}

// BenchmarkRelated reads the pods of one RC of 5,000 in a namespace of 30,000 (six
// RCs): from the owner index (Related, as an RC's sync does now), and by a scan of
// the namespace that keeps the same pods (as it did before).
func BenchmarkRelated(b *testing.B) {
	s := openMem(b, nil, 0)
	defer closeStore(b, s)
	const rcs, perRC = 6, 5000
	for r := range rcs {
		uid := "rc" + strconv.Itoa(r)
		var cmds []Command
		for i := range perRC {
			name := uid + "-" + strconv.Itoa(i)
			cmds = append(cmds, Command{Op: OpCreate, Key: podKey("ns", name), Object: ownedPod("ns", name, uid+"!")})
			if len(cmds) == 500 || i == perRC-1 {
				if _, _, err := s.Apply(ctx, cmds...); err != nil {
					b.Fatal(err)
				}
				cmds = nil
			}
		}
	}
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			if n := len(s.Related("pods", "ns", "rc3", "rc3-")); n != perRC {
				b.Fatalf("%d pods", n)
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if n := len(relatedByScan(s, "ns", "rc3", "rc3-")); n != perRC {
				b.Fatalf("%d pods", n)
			}
		}
	})
}
