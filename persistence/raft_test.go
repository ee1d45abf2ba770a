package persistence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// cluster is a Raft cluster of stores in this process, on real directories and
// 127.0.0.1 ports.
type cluster struct {
	t      testing.TB
	root   string
	addrs  map[string]string
	stores map[string]*Store
	tweak  func(*Replication)
	inMem  bool              // Pebble on an in-memory filesystem (benchmarks; lost at Close)
	fs     map[string]vfs.FS // a replica's own filesystem (crash tests)
	mu     sync.Mutex
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func newCluster(t testing.TB, n int, tweak func(*Replication)) *cluster {
	t.Helper()
	return startCluster(t, n, tweak, false)
}

func startCluster(t testing.TB, n int, tweak func(*Replication), inMem bool) *cluster {
	t.Helper()
	c := &cluster{t: t, root: t.TempDir(), addrs: map[string]string{}, stores: map[string]*Store{}, tweak: tweak, inMem: inMem}
	for i := 1; i <= n; i++ {
		c.addrs[fmt.Sprintf("m%d", i)] = freeAddr(t)
	}
	initial := map[string]string{}
	for k, v := range c.addrs {
		initial[k] = v
	}
	var wg sync.WaitGroup
	for name := range initial {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.open(name, Replication{InitialCluster: initial})
		}()
	}
	wg.Wait()
	t.Cleanup(c.closeAll)
	return c
}

// open opens (or reopens) replica name.
func (c *cluster) open(name string, rep Replication) *Store {
	c.t.Helper()
	c.mu.Lock()
	if c.addrs[name] == "" {
		c.addrs[name] = freeAddr(c.t)
	}
	rep.Name, rep.PeerAddress = name, c.addrs[name]
	rep.Meta = map[string]string{"api": "https://" + name}
	c.mu.Unlock()
	if c.tweak != nil {
		c.tweak(&rep)
	}
	opts := Options{Dir: filepath.Join(c.root, name), InMemory: c.inMem, NewObject: newObject, Replication: &rep, Claims: podCIDRClaims}
	if fs := c.fs[name]; fs != nil {
		opts.Dir, opts.fs = "db", fs
	}
	s, err := Open(opts)
	if err != nil {
		c.t.Errorf("open %s: %v", name, err)
		return nil
	}
	c.mu.Lock()
	c.stores[name] = s
	c.mu.Unlock()
	return s
}

func (c *cluster) close(name string) {
	c.t.Helper()
	c.mu.Lock()
	s := c.stores[name]
	delete(c.stores, name)
	c.mu.Unlock()
	if s != nil {
		if err := s.Close(); err != nil {
			c.t.Errorf("close %s: %v", name, err)
		}
	}
}

func (c *cluster) closeAll() {
	c.mu.Lock()
	names := make([]string, 0, len(c.stores))
	for n := range c.stores {
		names = append(names, n)
	}
	c.mu.Unlock()
	for _, n := range names {
		c.close(n)
	}
}

func (c *cluster) live() map[string]*Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]*Store, len(c.stores))
	for k, v := range c.stores {
		out[k] = v
	}
	return out
}

// leader waits for a ready leader among the live replicas.
func (c *cluster) leader() (string, *Store) {
	c.t.Helper()
	var name string
	var ls *Store
	poll.UntilTrue(c.t, 20*time.Second, "a ready leader", func() bool {
		for n, s := range c.live() {
			if s.IsLeader() && s.Ready() {
				name, ls = n, s
				return true
			}
		}
		return false
	})
	return name, ls
}

func (c *cluster) followers() []*Store {
	var out []*Store
	for _, s := range c.live() {
		if !s.IsLeader() {
			out = append(out, s)
		}
	}
	return out
}

// stateOf is a store's whole state: every item's key, revision and JSON, sorted.
func stateOf(s *Store) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.latest))
	for k, it := range s.latest {
		out = append(out, fmt.Sprintf("%s@%d %s", keyString(k), it.Revision, it.JSON()))
	}
	sort.Strings(out)
	return out
}

// feed reads the change feed of pods from 0 up to rev.
func feed(t testing.TB, s *Store, rev int64) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := s.Watch(ctx, "pods", "", 0)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	var out []string
	last := int64(0)
	for last < rev {
		evs, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("watch next (at %d of %d): %v", last, rev, err)
		}
		for _, ev := range evs {
			out = append(out, fmt.Sprintf("%s %s@%d %s", ev.Type, keyString(ev.Item.Key), ev.Item.Revision, ev.Item.JSON()))
			last = ev.Item.Revision
		}
	}
	return out
}

// sameState waits until every live replica has applied what the leader has and
// checks that they hold the same objects at the same revisions.
func (c *cluster) sameState() (rev int64) {
	c.t.Helper()
	_, ls := c.leader()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	want := stateOf(ls)
	rev = ls.Revision()
	for n, s := range c.live() {
		if err := s.ReadBarrier(ctx); err != nil {
			c.t.Fatalf("%s: read barrier: %v", n, err)
		}
		if s.Revision() != rev {
			got := map[string]bool{}
			for _, l := range stateOf(s) {
				got[strings.SplitN(l, " ", 2)[0]] = true
			}
			bad := 0
			for _, l := range want {
				if k := strings.SplitN(l, " ", 2)[0]; !got[k] && bad < 5 {
					bad++
					c.t.Logf("%s lacks %s", n, k)
				}
			}
			for _, l := range stateOf(s) {
				if k := strings.SplitN(l, " ", 2)[0]; strings.Contains(k, "new-9") || strings.Contains(k, "new-10") || strings.Contains(k, "old") {
					c.t.Logf("%s has %s", n, k)
				}
			}
			c.t.Fatalf("%s: revision %d, leader %d (applied %d, raft applied %d, commit %d; leader applied %d commit %d)",
				n, s.Revision(), rev, s.replica.applied.Load(), s.replica.raft.AppliedIndex(), s.replica.raft.CommitIndex(),
				ls.replica.applied.Load(), ls.replica.raft.CommitIndex())
		}
		if got := stateOf(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
			c.t.Fatalf("%s: %d objects differ from the leader's %d", n, len(got), len(want))
		}
	}
	return rev
}

func TestReplicatedWritesAreIdenticalOnEveryReplica(t *testing.T) {
	c := newCluster(t, 3, nil)
	_, ls := c.leader()
	ctx := context.Background()

	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				name := fmt.Sprintf("p-%d-%d", w, i)
				rev, objs, err := ls.Apply(ctx, create("default", name))
				if err != nil {
					t.Errorf("create %s: %v", name, err)
					return
				}
				if got := objs[0].(*corev1.Pod).ResourceVersion; got != fmt.Sprint(rev) {
					t.Errorf("create %s: resourceVersion %s, revision %d", name, got, rev)
				}
				if i%5 == 0 {
					p := pod("default", name)
					p.Spec.Containers[0].Image = "nginx:2"
					if _, _, err := ls.Apply(ctx, Command{Op: OpUpdate, Key: podKey("default", name), Object: p,
						Pre: preRV(rev)}); err != nil {
						t.Errorf("update %s: %v", name, err)
					}
				}
				if i%7 == 0 {
					if _, _, err := ls.Apply(ctx, Command{Op: OpDelete, Key: podKey("default", name)}); err != nil {
						t.Errorf("delete %s: %v", name, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	rev := c.sameState()

	var want []string
	for n, s := range c.live() {
		got := feed(t, s, rev)
		if want == nil {
			want = got
			continue
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: change feed differs (%d events, want %d)", n, len(got), len(want))
		}
	}
	if len(want) == 0 {
		t.Fatal("empty change feed")
	}
}

func TestReplicatedFollowerReadsAfterABarrier(t *testing.T) {
	c := newCluster(t, 3, nil)
	_, ls := c.leader()
	ctx := context.Background()
	fs := c.followers()
	if len(fs) != 2 {
		t.Fatalf("%d followers, want 2", len(fs))
	}
	for i := range 20 {
		name := fmt.Sprintf("r-%d", i)
		rev, _, err := ls.Apply(ctx, create("default", name))
		if err != nil {
			t.Fatal(err)
		}
		f := fs[i%2]
		if err := f.ReadBarrier(ctx); err != nil {
			t.Fatalf("read barrier: %v", err)
		}
		it, err := f.Get(podKey("default", name))
		if err != nil || it.Revision != rev {
			t.Fatalf("follower get %s after barrier: %v %v, want revision %d", name, it, err, rev)
		}
	}
	if fs[0].IsLeader() {
		t.Fatal("a follower became the leader")
	}
	// Ready is a moment's view: the follower has applied up to the commit index it
	// last learned, which a loaded machine may leave it behind for a while.
	poll.UntilTrue(t, 10*time.Second, "follower ready", fs[0].Ready)
}

func preRV(rev int64) command.Preconditions { return command.Preconditions{ResourceVersion: rev} }

func TestReplicatedStalePreconditionConflictsOnEveryReplica(t *testing.T) {
	c := newCluster(t, 3, nil)
	_, ls := c.leader()
	ctx := context.Background()
	rev, _, err := ls.Apply(ctx, create("default", "cas"))
	if err != nil {
		t.Fatal(err)
	}
	// Eight concurrent compare-and-swaps on the same revision: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := pod("default", "cas")
			p.Spec.Containers[0].Image = fmt.Sprintf("nginx:%d", i)
			_, _, err := ls.Apply(ctx, Command{Op: OpUpdate, Key: podKey("default", "cas"), Object: p, Pre: preRV(rev)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, ErrConflict):
				conflicts++
			default:
				t.Errorf("update: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Fatalf("%d wins, %d conflicts; want 1 and 7", wins, conflicts)
	}
	if _, _, err := ls.Apply(ctx, Command{Op: OpDelete, Key: podKey("default", "cas"), Pre: preRV(rev)}); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale delete: %v, want ErrConflict", err)
	}
	c.sameState()
	for n, s := range c.live() {
		it, err := s.Get(podKey("default", "cas"))
		if err != nil || it.Revision != rev+1 {
			t.Fatalf("%s: %v %v, want revision %d", n, it, err, rev+1)
		}
	}
}

func TestReplicatedLeaderLossUnderLoad(t *testing.T) {
	c := newCluster(t, 3, nil)
	ctx := context.Background()
	var mu sync.Mutex
	acked := map[string]int64{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("f-%d-%d", w, i)
				var s *Store
				stopped := false
				if !poll.For(20*time.Second, func() bool { // a leader, or the end of the load
					select {
					case <-stop:
						stopped = true
						return true
					default:
					}
					for _, cand := range c.live() {
						if cand.IsLeader() {
							s = cand
						}
					}
					return s != nil
				}) {
					t.Errorf("writer %d: no leader for 20 s", w)
					return
				}
				if stopped {
					return
				}
				rev, _, err := s.Apply(ctx, create("default", name))
				switch {
				case err == nil:
					mu.Lock()
					acked[name] = rev
					mu.Unlock()
				case errors.Is(err, ErrNotLeader), errors.Is(err, ErrUnknownOutcome), errors.Is(err, ErrClosed),
					errors.Is(err, ErrAlreadyExists):
				default:
					t.Errorf("create %s: %v", name, err)
					return
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	poll.UntilTrue(t, 20*time.Second, "writes before the failover", func() bool { return count() >= 100 })
	old, ls := c.leader()
	// Abrupt: Raft stops under the store (no leadership transfer), then the store.
	_ = ls.replica.raft.Shutdown().Error()
	before := count()
	poll.UntilTrue(t, 20*time.Second, "a new leader", func() bool {
		for n, s := range c.live() {
			if n != old && s.IsLeader() && s.Ready() {
				return true
			}
		}
		return false
	})
	poll.UntilTrue(t, 20*time.Second, "writes after the failover", func() bool { return count() >= before+100 })
	close(stop)
	wg.Wait()
	c.close(old)
	c.sameState()
	for n, s := range c.live() {
		mu.Lock()
		for name, rev := range acked {
			it, err := s.Get(podKey("default", name))
			if err != nil || it.Revision != rev {
				t.Errorf("%s: acknowledged %s@%d: %v %v", n, name, rev, it, err)
			}
		}
		mu.Unlock()
		seen := map[int64]string{}
		for _, line := range stateOf(s) {
			var key string
			var rev int64
			at := strings.Index(line, "@")
			key = line[:at]
			fmt.Sscanf(line[at+1:], "%d", &rev)
			if prev, ok := seen[rev]; ok {
				t.Fatalf("%s: revision %d used by %s and %s", n, rev, prev, key)
			}
			seen[rev] = key
		}
	}
}

func TestReplicatedRestartReplaysWithoutApplyingTwice(t *testing.T) {
	c := newCluster(t, 3, nil)
	name, ls := c.leader()
	ctx := context.Background()
	var follower string
	for n := range c.live() {
		if n != name {
			follower = n
		}
	}
	for i := range 30 {
		if _, _, err := ls.Apply(ctx, create("default", fmt.Sprintf("a-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// Updates without preconditions: applied twice, they would bump the revision.
	for i := range 10 {
		p := pod("default", fmt.Sprintf("a-%d", i))
		p.Labels["v"] = "2"
		if _, _, err := ls.Apply(ctx, Command{Op: OpUpdate, Key: podKey("default", p.Name), Object: p}); err != nil {
			t.Fatal(err)
		}
	}
	c.sameState()
	c.close(follower)
	for i := range 10 {
		if _, _, err := ls.Apply(ctx, create("default", fmt.Sprintf("b-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	s := c.open(follower, Replication{})
	if s == nil {
		t.FailNow()
	}
	if s.replica.applied.Load() == 0 {
		t.Fatal("the reopened replica lost its applied index")
	}
	rev := c.sameState()
	if got := feed(t, s, rev); len(got) != 50 {
		t.Fatalf("reopened replica's feed has %d events, want 50", len(got))
	}
	// The whole cluster restarted: the state is the same.
	before := stateOf(ls)
	for n := range c.live() {
		c.close(n)
	}
	var wg sync.WaitGroup
	for _, n := range []string{"m1", "m2", "m3"} {
		wg.Add(1)
		go func() { defer wg.Done(); c.open(n, Replication{}) }()
	}
	wg.Wait()
	if got := c.sameState(); got != rev {
		t.Fatalf("revision %d after a full restart, want %d", got, rev)
	}
	_, ls = c.leader()
	if strings.Join(stateOf(ls), "\n") != strings.Join(before, "\n") {
		t.Fatal("state differs after a full restart")
	}
}

func TestReplicatedLaggingReplicaCatchesUpBySnapshot(t *testing.T) {
	c := newCluster(t, 3, func(r *Replication) {
		r.SnapshotThreshold, r.TrailingLogs, r.SnapshotInterval = 32, 8, 20*time.Millisecond
	})
	name, ls := c.leader()
	ctx := context.Background()
	var follower string
	for n := range c.live() {
		if n != name {
			follower = n
		}
	}
	for i := range 20 {
		if _, _, err := ls.Apply(ctx, create("default", fmt.Sprintf("old-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	c.sameState()
	stoppedAt, _ := c.live()[follower].replica.logs.LastIndex()
	c.close(follower)
	for i := range 300 {
		if _, _, err := ls.Apply(ctx, create("default", fmt.Sprintf("new-%d", i))); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if _, _, err := ls.Apply(ctx, Command{Op: OpDelete, Key: podKey("default", fmt.Sprintf("old-%d", i/50))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll.UntilTrue(t, 20*time.Second, "the leader's log truncated past the stopped replica", func() bool {
		first, _ := ls.replica.logs.FirstIndex()
		return first > stoppedAt+1
	})
	s := c.open(follower, Replication{})
	if s == nil {
		t.FailNow()
	}
	w, werr := s.Watch(ctx, "pods", "", s.Revision())
	rev := c.sameState()
	if s.changes.Load().compactRev == 0 {
		t.Fatal("the replica did not install a snapshot")
	}
	if werr == nil {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := w.Next(wctx); !errors.Is(err, ErrCompacted) {
			t.Fatalf("watcher behind the snapshot: %v, want ErrCompacted", err)
		}
	} else if !errors.Is(werr, ErrCompacted) {
		t.Fatalf("watch: %v", werr)
	}
	// It serves the new writes, and watches from its revision work.
	if _, err := s.Get(podKey("default", "new-299")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Watch(ctx, "pods", "", rev); err != nil {
		t.Fatalf("watch from the current revision: %v", err)
	}
	if _, _, err := ls.Apply(ctx, create("default", "after")); err != nil {
		t.Fatal(err)
	}
	c.sameState()
	// Restarted after the install, it starts from its own state.
	c.close(follower)
	if c.open(follower, Replication{}) == nil {
		t.FailNow()
	}
	c.sameState()
}

func TestReplicatedJoinAndRemoveMember(t *testing.T) {
	c := newCluster(t, 3, nil)
	_, ls := c.leader()
	ctx := context.Background()
	for i := range 10 {
		if _, _, err := ls.Apply(ctx, create("default", fmt.Sprintf("j-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	via := c.followers()[0].replica.addr // a follower forwards the join to the leader
	s4 := c.open("m4", Replication{Join: "http://" + via})
	if s4 == nil {
		t.FailNow()
	}
	c.sameState()
	ms, err := c.followers()[0].Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaders := 0
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
		if m.Leader {
			leaders++
		}
		if !m.Reachable || !m.Voter || m.Meta["api"] != "https://"+m.Name || m.Revision != ls.Revision() {
			t.Errorf("member %+v", m)
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "m1,m2,m3,m4" || leaders != 1 {
		t.Fatalf("members %v with %d leaders", names, leaders)
	}
	if m, ok := s4.Leader(); !ok || !m.Leader {
		t.Fatalf("leader seen from m4: %+v %v", m, ok)
	}
	// Removed through a follower (forwarded to the leader).
	if err := c.followers()[0].RemoveMember(ctx, "m4"); err != nil {
		t.Fatal(err)
	}
	c.close("m4")
	ms, err = ls.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 {
		t.Fatalf("%d members after the removal, want 3", len(ms))
	}
	if _, _, err := ls.Apply(ctx, create("default", "after-remove")); err != nil {
		t.Fatal(err)
	}
	c.sameState()
}

func TestReplicatedLeadershipChannel(t *testing.T) {
	c := newCluster(t, 3, nil)
	name, ls := c.leader()
	ch := ls.Leadership()
	select {
	case v := <-ch:
		if !v {
			t.Fatal("leader's channel starts with false")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no leadership value")
	}
	// The leader steps down: its channel says so.
	if err := ls.replica.raft.LeadershipTransfer().Error(); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-ch:
		if v {
			t.Fatal("want false after the transfer")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no leadership change")
	}
	n2, _ := c.leader()
	if n2 == name {
		t.Fatal("leadership did not move")
	}
}

func TestReplicatedLeaderWithoutMajorityNeverAcknowledges(t *testing.T) {
	c := newCluster(t, 3, nil)
	name, ls := c.leader()
	ctx := context.Background()
	if _, _, err := ls.Apply(ctx, create("default", "before")); err != nil {
		t.Fatal(err)
	}
	for n := range c.live() {
		if n != name {
			c.close(n)
		}
	}
	// The entry cannot be committed: the caller learns that it is not the leader
	// (not proposed) or that the outcome is unknown (proposed, then leadership lost).
	_, _, err := ls.Apply(ctx, create("default", "orphan"))
	if !errors.Is(err, ErrUnknownOutcome) && !errors.Is(err, ErrNotLeader) {
		t.Fatalf("apply without a majority: %v, want ErrUnknownOutcome or ErrNotLeader", err)
	}
	t.Logf("apply without a majority: %v", err)
	if ls.Ready() {
		t.Fatal("a replica without a leader is ready")
	}
	// Back together, the replicas agree on whatever became of it.
	for _, n := range []string{"m1", "m2", "m3"} {
		if n != name {
			c.open(n, Replication{})
		}
	}
	c.sameState()
}

func TestReplicatedPeerPortServesRaftRoutesAndThePeerHandler(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "forwarded %s", r.URL.Path)
	})
	c := newCluster(t, 3, func(r *Replication) {
		if r.Name != "m3" {
			r.PeerHandler = handler
		}
	})
	c.leader()
	get := func(addr, path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		member, path string
		code         int
		body         string
	}{
		{member: "m1", path: "/api/v1/pods", code: 200, body: "forwarded /api/v1/pods"},
		{member: "m3", path: "/api/v1/pods", code: 404},
		{member: "m1", path: "/raft/info", code: 200, body: `"name":"m1"`},
		{member: "m2", path: "/raft/nothing", code: 404},
	}
	for _, tt := range tests {
		code, body := get(c.addrs[tt.member], tt.path)
		if code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("%s %s: %d %q, want %d %q", tt.member, tt.path, code, body, tt.code, tt.body)
		}
	}
}

func TestReplicatedFollowerCrashReplaysWhatItsStateLost(t *testing.T) {
	c := newCluster(t, 3, nil)
	name, ls := c.leader()
	var follower string
	for n := range c.live() {
		if n != name {
			follower = n
		}
	}
	// The follower moves to a filesystem that can drop what was not synced.
	fs := vfs.NewStrictMem()
	c.fs = map[string]vfs.FS{follower: fs}
	c.close(follower)
	if c.open(follower, Replication{Join: "http://" + c.addrs[name]}) == nil {
		t.FailNow()
	}
	ctx := context.Background()
	for i := range 40 {
		if _, _, err := ls.Apply(ctx, create("default", fmt.Sprintf("c-%d", i))); err != nil {
			t.Fatal(err)
		}
		p := pod("default", fmt.Sprintf("c-%d", i/2))
		p.Labels["n"] = fmt.Sprint(i)
		if _, _, err := ls.Apply(ctx, Command{Op: OpUpdate, Key: podKey("default", p.Name), Object: p}); err != nil {
			t.Fatal(err)
		}
	}
	rev := c.sameState()
	fsl := c.live()[follower]
	appliedBefore := fsl.replica.applied.Load()
	// kill -9: what the follower's FSM wrote after its last synced log append is gone.
	_ = fsl.replica.raft.Shutdown().Error()
	fs.SetIgnoreSyncs(true)
	c.close(follower)
	fs.ResetToSyncedState()
	fs.SetIgnoreSyncs(false)
	s := c.open(follower, Replication{})
	if s == nil {
		t.FailNow()
	}
	t.Logf("applied index %d before the crash, %d recovered from disk", appliedBefore, s.replica.applied.Load())
	if got := c.sameState(); got != rev {
		t.Fatalf("revision %d after the crash, want %d", got, rev)
	}
	if got := feed(t, s, rev); len(got) != 80 {
		t.Fatalf("feed of %d events after the crash", len(got))
	}
}

// A non-voter (a member that only hosts actors) gets every committed write,
// forwards its own to the leader, is listed as no voter, never leads, and does not
// count for the quorum: a cluster of one voter keeps writing with it gone.
func TestReplicatedNonVoterFollowsAndForwards(t *testing.T) {
	c := newCluster(t, 1, nil)
	_, ls := c.leader()
	ctx := context.Background()
	if _, _, err := ls.Apply(ctx, create("default", "before")); err != nil {
		t.Fatal(err)
	}
	nv := c.open("nv", Replication{Join: "http://" + ls.replica.addr, NonVoter: true})
	if nv == nil {
		t.FailNow()
	}
	waitFor(t, func() bool { _, ok := nv.Leader(); return ok && nv.Ready() })
	if !ls.IsLeader() {
		t.Fatal("the voter lost its leadership to a non-voter's join")
	}
	if _, _, err := nv.Apply(ctx, create("default", "from-nonvoter")); err != nil {
		t.Fatalf("a non-voter's write: %v", err)
	}
	c.sameState()
	ms, err := ls.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if want := m.Name == "m1"; m.Voter != want || m.Leader != want || !m.Reachable {
			t.Errorf("member %+v", m)
		}
	}
	if len(ms) != 2 || nv.IsLeader() {
		t.Fatalf("members %+v; non-voter leads: %v", ms, nv.IsLeader())
	}
	c.close("nv")
	if _, _, err := ls.Apply(ctx, create("default", "after")); err != nil {
		t.Fatalf("the voter alone: %v", err)
	}
}
