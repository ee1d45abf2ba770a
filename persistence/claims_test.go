package persistence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// podCIDRClaims is the tests' Claims: a node holds its spec.podCIDR.
func podCIDRClaims(resource string, obj runtime.Object) []string {
	if n, ok := obj.(*corev1.Node); ok && resource == "nodes" && n.Spec.PodCIDR != "" {
		return []string{"podcidr/" + n.Spec.PodCIDR}
	}
	return nil
}

func nodeWithCIDR(name, cidr string) *corev1.Node {
	n := node(name)
	n.Spec.PodCIDR = cidr
	return n
}

func nodeKey(name string) Key { return Key{Resource: "nodes", Name: name} }

func TestClaims(t *testing.T) {
	put := func(op Op, name, cidr string) Command {
		return Command{Op: op, Key: nodeKey(name), Object: nodeWithCIDR(name, cidr)}
	}
	del := func(name string) Command { return Command{Op: OpDelete, Key: nodeKey(name)} }
	type step struct {
		txn     []Command
		claimed bool // the transaction fails with ErrClaimed
	}
	tests := []struct {
		name   string
		steps  []step
		holder map[string]string // claim -> node name at the end ("" = nobody)
	}{
		{"a value held by another object is refused", []step{
			{txn: []Command{put(OpCreate, "a", "10.0.1.0/24")}},
			{txn: []Command{put(OpCreate, "b", "10.0.1.0/24")}, claimed: true},
			{txn: []Command{put(OpCreate, "b", "10.0.2.0/24")}},
			{txn: []Command{put(OpUpdate, "b", "10.0.1.0/24")}, claimed: true},
		}, map[string]string{"podcidr/10.0.1.0/24": "a", "podcidr/10.0.2.0/24": "b"}},
		{"an update gives its old value back", []step{
			{txn: []Command{put(OpCreate, "a", "10.0.1.0/24")}},
			{txn: []Command{put(OpUpdate, "a", "10.0.3.0/24")}},
			{txn: []Command{put(OpCreate, "b", "10.0.1.0/24")}},
		}, map[string]string{"podcidr/10.0.1.0/24": "b", "podcidr/10.0.3.0/24": "a"}},
		{"a delete gives its value back", []step{
			{txn: []Command{put(OpCreate, "a", "10.0.1.0/24")}},
			{txn: []Command{del("a")}},
			{txn: []Command{put(OpCreate, "b", "10.0.1.0/24")}},
		}, map[string]string{"podcidr/10.0.1.0/24": "b"}},
		{"rewriting a held value is no claim", []step{
			{txn: []Command{put(OpCreate, "a", "10.0.1.0/24")}},
			{txn: []Command{put(OpUpdate, "a", "10.0.1.0/24")}},
		}, map[string]string{"podcidr/10.0.1.0/24": "a"}},
		{"one transaction hands a value over", []step{
			{txn: []Command{put(OpCreate, "a", "10.0.1.0/24")}},
			{txn: []Command{put(OpUpdate, "a", "10.0.2.0/24"), put(OpCreate, "b", "10.0.1.0/24")}},
		}, map[string]string{"podcidr/10.0.1.0/24": "b", "podcidr/10.0.2.0/24": "a"}},
		{"two creates of one transaction claiming one value fail together", []step{
			{txn: []Command{put(OpCreate, "a", "10.0.1.0/24"), put(OpCreate, "b", "10.0.1.0/24")}, claimed: true},
		}, map[string]string{"podcidr/10.0.1.0/24": ""}},
		{"objects without claims are not checked", []step{
			{txn: []Command{put(OpCreate, "a", ""), put(OpCreate, "b", "")}},
		}, map[string]string{"podcidr/": ""}},
	}
	for _, tt := range tests {
		for _, lean := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lean=%v", tt.name, lean), func(t *testing.T) {
				fs := vfs.NewMem()
				s := openMem(t, fs, 0)
				ctx := context.Background()
				for i, st := range tt.steps {
					if lean {
						leanAll(s) // the claims of the versions replaced are read lean
					}
					before := s.Revision()
					_, _, err := s.Apply(ctx, st.txn...)
					switch {
					case st.claimed && !errors.Is(err, ErrClaimed):
						t.Fatalf("step %d: %v, want ErrClaimed", i, err)
					case st.claimed && !errors.Is(err, ErrConflict):
						t.Fatalf("step %d: %v does not wrap ErrConflict", i, err)
					case st.claimed && s.Revision() != before:
						t.Fatalf("step %d: a refused transaction moved the revision", i)
					case !st.claimed && err != nil:
						t.Fatalf("step %d: %v", i, err)
					}
				}
				check := func(s *Store, when string) {
					for c, want := range tt.holder {
						k, ok := s.ClaimHolder(c)
						if want == "" && ok {
							t.Errorf("%s: %s held by %v, want nobody", when, c, k)
						}
						if want != "" && (!ok || k != nodeKey(want)) {
							t.Errorf("%s: %s held by %v (%v), want %s", when, c, k, ok, want)
						}
					}
				}
				check(s, "running")
				closeStore(t, s)
				s = openMem(t, fs, 0) // the index is rebuilt from the stored objects
				defer closeStore(t, s)
				check(s, "after a restart")
			})
		}
	}
}

// TestClaimsConcurrent: many creates claiming one value at once, committed in the
// same groups: exactly one is stored.
func TestClaimsConcurrent(t *testing.T) {
	s := openMem(t, nil, 0)
	defer closeStore(t, s)
	const n = 40
	wins, claimed := raceForOneValue(t, func(int) *Store { return s }, n)
	if wins != 1 || claimed != n-1 {
		t.Fatalf("%d stored, %d refused; want 1 and %d", wins, claimed, n-1)
	}
}

// TestReplicatedClaims: creates claiming one value through every replica at once:
// exactly one is stored, and every replica names the same holder.
func TestReplicatedClaims(t *testing.T) {
	c := newCluster(t, 3, nil)
	leader, _ := c.leader()
	var stores []*Store
	for _, s := range c.live() {
		stores = append(stores, s)
	}
	// A follower that has not heard from the new leader yet refuses a write ("no
	// leader known"): race only once every replica names it.
	poll.UntilTrue(t, 20*time.Second, "every replica knows the leader", func() bool {
		for _, s := range stores {
			if m, ok := s.Leader(); !ok || m.Name != leader {
				return false
			}
		}
		return true
	})
	const n = 30
	wins, claimed := raceForOneValue(t, func(i int) *Store { return stores[i%len(stores)] }, n)
	if wins != 1 || claimed != n-1 {
		t.Fatalf("%d stored, %d refused; want 1 and %d", wins, claimed, n-1)
	}
	c.sameState()
	var holder *Key
	for name, s := range c.live() {
		k, ok := s.ClaimHolder("podcidr/10.9.0.0/24")
		if !ok {
			t.Fatalf("%s: nobody holds the value", name)
		}
		if holder != nil && *holder != k {
			t.Fatalf("%s: held by %v, another replica says %v", name, k, *holder)
		}
		holder = &k
	}
}

func raceForOneValue(t *testing.T, store func(int) *Store, n int) (wins, claimed int) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("n%d", i)
			_, _, err := store(i).Apply(context.Background(),
				Command{Op: OpCreate, Key: nodeKey(name), Object: nodeWithCIDR(name, "10.9.0.0/24")})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, ErrClaimed):
				claimed++
			default:
				t.Errorf("create %s: %v", name, err)
			}
		}()
	}
	wg.Wait()
	return wins, claimed
}
