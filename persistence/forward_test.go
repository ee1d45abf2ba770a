package persistence

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// followerPair returns the cluster's leader and its two followers.
func followerPair(t *testing.T, c *cluster) (*Store, [2]*Store) {
	t.Helper()
	_, ls := c.leader()
	fs := c.followers()
	if len(fs) != 2 {
		t.Fatalf("%d followers, want 2", len(fs))
	}
	leaderKnown(t, fs[0], fs[1])
	return ls, [2]*Store{fs[0], fs[1]}
}

// leaderKnown waits until each follower has heard from a leader: a follower's first
// write right after the cluster started may otherwise find none (ErrNotLeader).
func leaderKnown(t *testing.T, fs ...*Store) {
	t.Helper()
	poll.UntilTrue(t, 20*time.Second, "the followers know the leader", func() bool {
		for _, f := range fs {
			if _, ok := f.Leader(); !ok {
				return false
			}
		}
		return true
	})
}

// steady is a cluster tweak for tests that need one leader throughout: an election
// timeout long enough that a machine loaded by -race and other tests does not start
// needless elections (the store's LAN default is 300 ms).
func steady(r *Replication) {
	r.HeartbeatTimeout, r.ElectionTimeout, r.LeaderLeaseTimeout = 2*time.Second, 2*time.Second, 2*time.Second
}

func TestFollowerApplyHasTheLeadersContract(t *testing.T) {
	c := newCluster(t, 3, nil)
	ls, fs := followerPair(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	key := podKey("default", "a")
	withImage := func(image string) *corev1.Pod {
		p := pod("default", "a")
		p.Spec.Containers[0].Image = image
		return p
	}
	var last int64 // revision of "a"'s last write
	tests := []struct {
		name    string
		via     int // follower
		cmds    func() []Command
		wantErr error
		image   string // the image "a" has after the step ("" when it does not exist)
	}{
		{name: "create", via: 0, image: "nginx:1.7.9",
			cmds: func() []Command { return []Command{create("default", "a")} }},
		{name: "create existing", via: 1, wantErr: ErrAlreadyExists, image: "nginx:1.7.9",
			cmds: func() []Command { return []Command{create("default", "a")} }},
		{name: "update with the current resourceVersion", via: 1, image: "nginx:2",
			cmds: func() []Command {
				return []Command{{Op: OpUpdate, Key: key, Object: withImage("nginx:2"), Pre: preRV(last)}}
			}},
		{name: "update with a stale resourceVersion", via: 0, wantErr: ErrConflict, image: "nginx:2",
			cmds: func() []Command {
				return []Command{{Op: OpUpdate, Key: key, Object: withImage("nginx:3"), Pre: preRV(last - 1)}}
			}},
		{name: "update with another uid", via: 0, wantErr: ErrConflict, image: "nginx:2",
			cmds: func() []Command {
				return []Command{{Op: OpUpdate, Key: key, Object: withImage("nginx:3"),
					Pre: command.Preconditions{UID: types.UID("another")}}}
			}},
		{name: "unconditional update", via: 0, image: "nginx:4",
			cmds: func() []Command { return []Command{{Op: OpUpdate, Key: key, Object: withImage("nginx:4")}} }},
		{name: "delete with a stale resourceVersion", via: 1, wantErr: ErrConflict, image: "nginx:4",
			cmds: func() []Command { return []Command{{Op: OpDelete, Key: key, Pre: preRV(last - 1)}} }},
		{name: "two commands, the second failing", via: 1, wantErr: ErrAlreadyExists, image: "nginx:4",
			cmds: func() []Command {
				return []Command{{Op: OpUpdate, Key: key, Object: withImage("nginx:5")}, create("default", "a")}
			}},
		{name: "delete with the current resourceVersion", via: 1,
			cmds: func() []Command { return []Command{{Op: OpDelete, Key: key, Pre: preRV(last)}} }},
		{name: "update of a missing object", via: 0, wantErr: ErrNotFound,
			cmds: func() []Command { return []Command{{Op: OpUpdate, Key: key, Object: withImage("nginx:6")}} }},
		{name: "delete of a missing object", via: 1, wantErr: ErrNotFound,
			cmds: func() []Command { return []Command{{Op: OpDelete, Key: key}} }},
		{name: "object of another name", via: 0, wantErr: ErrInvalid,
			cmds: func() []Command { return []Command{{Op: OpCreate, Key: key, Object: pod("default", "b")}} }},
		{name: "create and update in one transaction", via: 0, image: "nginx:7",
			cmds: func() []Command {
				return []Command{create("default", "a"), {Op: OpUpdate, Key: key, Object: withImage("nginx:7")}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fs[tt.via]
			before := ls.Revision()
			rev, objs, err := f.Apply(ctx, tt.cmds()...)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("follower: %v, want %v", err, tt.wantErr)
				}
				// The leader answers the same transaction with the same error (it
				// changed nothing).
				if _, _, lerr := ls.Apply(ctx, tt.cmds()...); lerr == nil || lerr.Error() != err.Error() {
					t.Fatalf("follower's error %q, the leader's %v", err, lerr)
				}
				if got := ls.Revision(); got != before {
					t.Fatalf("revision %d after a failed write, was %d", got, before)
				}
			} else {
				if err != nil {
					t.Fatalf("follower: %v", err)
				}
				last = rev
				if len(objs) != len(tt.cmds()) {
					t.Fatalf("%d objects for %d commands", len(objs), len(tt.cmds()))
				}
			}
			// A read on the follower right after its write sees it.
			it, gerr := f.Get(key)
			switch {
			case tt.image == "" && !errors.Is(gerr, ErrNotFound):
				t.Fatalf("follower get after the write: %v %v, want not found", it, gerr)
			case tt.image != "" && (gerr != nil || podImage(it) != tt.image || it.Revision != last):
				t.Fatalf("follower get after the write: %v %v, want %s at %d", it, gerr, tt.image, last)
			}
			if err == nil {
				// The objects returned are the follower's own, shared with its cache.
				lastObj := objs[len(objs)-1]
				if tt.image == "" {
					if lastObj != nil {
						t.Fatalf("delete returned %v", lastObj)
					}
				} else if lastObj != it.Object() {
					t.Fatalf("returned object %p is not the cached one %p", lastObj, it.Object())
				}
				for _, o := range objs {
					if o != nil && o.(*corev1.Pod).ResourceVersion != fmt.Sprint(rev) {
						t.Fatalf("returned resourceVersion %s, revision %d", o.(*corev1.Pod).ResourceVersion, rev)
					}
				}
			}
			if got := c.sameState(); got < last {
				t.Fatalf("leader at %d, behind the write at %d", got, last)
			}
		})
	}
}

func TestFollowerConcurrentWritesFromEveryReplica(t *testing.T) {
	c := newCluster(t, 3, steady)
	ls, fs := followerPair(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stores := []*Store{ls, fs[0], fs[1]}
	const perStore = 20
	var mu sync.Mutex
	acked := map[string]int64{}
	revs := map[int64]string{}
	var wg sync.WaitGroup
	for si, s := range stores {
		for g := range perStore {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("w-%d-%d", si, g)
				rev, objs, err := s.Apply(ctx, create("default", name))
				if err != nil {
					t.Errorf("create %s on store %d: %v", name, si, err)
					return
				}
				p := pod("default", name)
				p.Labels["updated"] = "yes"
				urev, _, err := s.Apply(ctx, Command{Op: OpUpdate, Key: podKey("default", name), Object: p, Pre: preRV(rev)})
				if err != nil {
					t.Errorf("update %s on store %d: %v", name, si, err)
					return
				}
				if got := objs[0].(*corev1.Pod).ResourceVersion; got != fmt.Sprint(rev) {
					t.Errorf("create %s: resourceVersion %s, revision %d", name, got, rev)
				}
				if it, err := s.Get(podKey("default", name)); err != nil || it.Revision < urev {
					t.Errorf("store %d reads %s after its update: %v %v, want revision %d", si, name, it, err, urev)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, r := range []int64{rev, urev} {
					if prev, ok := revs[r]; ok {
						t.Errorf("revision %d acknowledged for %s and %s", r, prev, name)
					}
					revs[r] = name
				}
				acked[name] = urev
			}()
		}
	}
	wg.Wait()
	if len(acked) != len(stores)*perStore {
		t.Fatalf("%d writes acknowledged, want %d", len(acked), len(stores)*perStore)
	}
	c.sameState()
	for n, s := range c.live() {
		for name, rev := range acked {
			it, err := s.Get(podKey("default", name))
			if err != nil || it.Revision != rev || it.Object().(*corev1.Pod).Labels["updated"] != "yes" {
				t.Fatalf("%s: %s: %v %v, want the update at %d", n, name, it, err, rev)
			}
		}
	}
}

// TestFollowerApplyWithTheLeaderStopped: a follower's writes while the leader is
// going or gone end with ErrNotLeader or ErrUnknownOutcome (or succeed through a
// new leader), within their ctx.
func TestFollowerApplyWithTheLeaderStopped(t *testing.T) {
	tests := []struct {
		name      string
		stop      func(c *cluster, leader string, other string)
		newLeader bool // the survivors elect one: writes may succeed
	}{
		{name: "leader's raft stopped under its peer port", stop: func(c *cluster, leader, _ string) {
			_ = c.live()[leader].replica.raft.Shutdown().Error()
		}, newLeader: true},
		{name: "leader closed", stop: func(c *cluster, leader, _ string) { c.close(leader) }, newLeader: true},
		{name: "leader and the other follower closed", stop: func(c *cluster, leader, other string) {
			c.close(other)
			c.close(leader)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, 3, nil)
			leader, ls := c.leader()
			var f *Store
			var fname, other string
			for n, s := range c.live() {
				switch {
				case s == ls:
				case f == nil:
					f, fname = s, n
				default:
					other = n
				}
			}
			leaderKnown(t, f)
			// A first write makes the keep-alive connection to the leader.
			if _, _, err := f.Apply(context.Background(), create("default", "first")); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			outcomes := map[string]int{}
			start := make(chan struct{})
			for g := range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := range 5 {
						ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
						errc := make(chan error, 1)
						go func() {
							_, _, err := f.Apply(ctx, create("default", fmt.Sprintf("s-%d-%d", g, i)))
							errc <- err
						}()
						var err error
						select {
						case err = <-errc:
						case <-time.After(20 * time.Second):
							t.Errorf("apply on %s hung past its ctx", fname)
							cancel()
							return
						}
						cancel()
						mu.Lock()
						switch {
						case err == nil: // before the stop, or through a new leader
							outcomes["ok"]++
						case errors.Is(err, ErrNotLeader):
							outcomes["not leader"]++
						case errors.Is(err, ErrUnknownOutcome):
							outcomes["unknown"]++
						default:
							t.Errorf("apply on %s: %v, want ErrNotLeader or ErrUnknownOutcome", fname, err)
						}
						mu.Unlock()
					}
				}()
			}
			close(start)
			tt.stop(c, leader, other)
			wg.Wait()
			t.Logf("outcomes: %v", outcomes)
			if !tt.newLeader {
				// Alone, the follower refuses every write, within its ctx.
				for i := range 5 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					_, _, err := f.Apply(ctx, create("default", fmt.Sprintf("alone-%d", i)))
					cancel()
					if !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrUnknownOutcome) {
						t.Fatalf("apply on a follower alone: %v, want ErrNotLeader or ErrUnknownOutcome", err)
					}
				}
				return
			}
			// The survivors go on: the follower's writes succeed again.
			c.close(leader)
			c.leader()
			poll.Until(t, 20*time.Second, "a write from the follower after the failover", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, _, err := f.Apply(ctx, create("default", "after"))
				if err == nil || errors.Is(err, ErrAlreadyExists) {
					return nil
				}
				if !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrUnknownOutcome) {
					t.Fatalf("apply after the failover: %v", err)
				}
				return err
			})
			c.sameState()
		})
	}
}

func TestFollowerApplyWithADoneContextSendsNothing(t *testing.T) {
	c := newCluster(t, 3, nil)
	ls, fs := followerPair(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := ls.Revision()
	if _, _, err := fs[0].Apply(ctx, create("default", "late")); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("apply with a cancelled ctx: %v, want context.Canceled", err)
	}
	if rev := c.sameState(); rev != before {
		t.Fatalf("revision %d after a cancelled apply, was %d", rev, before)
	}
}

// TestFollowerForwardTransportFaults: what a follower makes of a leader it cannot
// reach (nothing sent: ErrNotLeader) and of one lost after the request was sent
// (ErrUnknownOutcome).
func TestFollowerForwardTransportFaults(t *testing.T) {
	closed := freeAddr(t) // nothing listens there
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() { // reads the request, then drops the connection without an answer
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err == nil {
					_, _ = io.Copy(io.Discard, req.Body)
				}
				_ = conn.Close()
			}()
		}
	}()
	r := &replica{cli: &http.Client{Transport: &http.Transport{}}}
	body := encodeEntry(entryOrigin{name: "f"}, []*request{mustPrepare(t, create("default", "x"))})
	tests := []struct {
		name string
		addr string
		want error
	}{
		{name: "leader unreachable", addr: closed, want: ErrNotLeader},
		{name: "leader lost after the request was sent", addr: ln.Addr().String(), want: ErrUnknownOutcome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := r.postApply(ctx, "leader", tt.addr, body, 1)
			if !errors.Is(err, tt.want) {
				t.Fatalf("%v, want %v", err, tt.want)
			}
		})
	}
}

// TestFollowerErrorsKeepTheirIdentity: the leader's errors, through the answer's
// encoding, keep their sentinels and message.
func TestFollowerErrorsKeepTheirIdentity(t *testing.T) {
	tests := []struct {
		err  error
		want []error
	}{
		{err: fmt.Errorf("create pods/default/a: %w", ErrAlreadyExists), want: []error{ErrAlreadyExists}},
		{err: fmt.Errorf("update pods/default/a: %w", ErrNotFound), want: []error{ErrNotFound}},
		{err: fmt.Errorf("update pods/default/a: %w: stale", ErrConflict), want: []error{ErrConflict}},
		{err: fmt.Errorf("apply: %w: no object", ErrInvalid), want: []error{ErrInvalid}},
		{err: fmt.Errorf("apply: %w", ErrNotLeader), want: []error{ErrNotLeader}},
		{err: fmt.Errorf("apply: %w: %w", ErrUnknownOutcome, ErrClosed), want: []error{ErrUnknownOutcome, ErrClosed}},
		{err: errors.New("commit revisions 3-4: disk full"), want: nil},
	}
	results := []result{{rev: 7}}
	for _, tt := range tests {
		results = append(results, result{err: tt.err})
	}
	got, err := decodeResults(encodeResults(results), len(results))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].rev != 7 || got[0].err != nil {
		t.Fatalf("success: %+v", got[0])
	}
	for i, tt := range tests {
		g := got[i+1].err
		if g == nil || g.Error() != tt.err.Error() {
			t.Fatalf("%v: got %v", tt.err, g)
		}
		for _, s := range forwardedErrors {
			want := false
			for _, w := range tt.want {
				want = want || w == s
			}
			if errors.Is(g, s) != want {
				t.Errorf("%v: errors.Is(%v) = %v", tt.err, s, !want)
			}
		}
	}
}

func mustPrepare(t *testing.T, cmds ...Command) *request {
	t.Helper()
	r, err := prepare(cmds)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
