package persistence

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sirupsen/logrus"
)

// ErrUnknownOutcome is returned by Apply when this replica lost its leadership (or
// stopped) while the transaction was in flight: it may or may not have been
// committed. Read the object again to know.
var ErrUnknownOutcome = errors.New("persistence: outcome unknown: leadership lost while the write was in flight")

// LAN defaults of the Raft timing (hashicorp/raft's, 1 s, are for a WAN). A follower
// campaigns after 300-600 ms without the leader (its heartbeats come every 30-60
// ms): kill -9 of the leader to the first acknowledged write measured p50 0.6 s, p99
// 0.8 s on a loaded 2-core machine (1.0 s and 1.9 s with 500 ms; see
// docs/benchmarks.md). The lease is as long: a leader steps down only after 300 ms
// without a majority, not on a scheduling hiccup of a busy machine (reads do not
// rely on it: the read barrier confirms the leadership).
const (
	defaultHeartbeatTimeout   = 300 * time.Millisecond
	defaultElectionTimeout    = 300 * time.Millisecond
	defaultLeaderLeaseTimeout = 300 * time.Millisecond
	defaultCommitTimeout      = 10 * time.Millisecond
	defaultSnapshotThreshold  = 8192
	defaultTrailingLogs       = 10240
	defaultSnapshotInterval   = 30 * time.Second
	// maxEntryBytes bounds the objects' JSON in one Raft entry.
	maxEntryBytes = 4 << 20
	// maxInflight bounds the entries proposed and not yet answered (the pipeline).
	maxInflight = 1024
	// pipelineDepth is how many entries the committer keeps in flight: a few, so
	// that the log is written and replicated while the next group gathers (and
	// entries stay large: fewer fsyncs on every replica).
	pipelineDepth = 2
)

// replica is the Raft side of a replicated store.
type replica struct {
	s     *Store
	name  string
	addr  string
	inc   uint64 // this incarnation: entries of an earlier one are never answered here
	conf  Replication
	log   logrus.FieldLogger
	raft  *raft.Raft
	logs  *raftLog
	snaps raft.SnapshotStore
	layer *peerLayer
	http  *http.Server
	cli   *http.Client

	seq      uint64 // owned by the committer
	pmu      sync.Mutex
	pending  map[uint64][]*request // proposed by this replica, by sequence number
	inflight chan inflightEntry
	slots    chan struct{} // one per entry in flight (pipelineDepth)
	waiterWG sync.WaitGroup

	applied   atomic.Uint64 // last Raft index the FSM applied (or restored)
	appliedMu sync.Mutex
	appliedCh chan struct{} // closed when applied advances
	failed    atomic.Pointer[error]
	failedCh  chan struct{} // closed when the FSM failed (failed is set)
	failOnce  sync.Once

	lmu       sync.Mutex
	lead      bool
	epoch     uint64        // counts the terms this replica led
	termReady uint64        // epoch whose first entry is applied: its commit index is current
	termCh    chan struct{} // closed when lead or termReady changes
	subs      []*leaderSub
	notify    chan bool

	imu  sync.Mutex
	info map[string]memberInfo // last report of each member, by name

	// A follower's forwarded transactions (forward.go).
	fwdq      chan *forwardCall
	fwdCtx    context.Context // the forwarded batches' requests; cancelled at shutdown
	fwdCancel context.CancelFunc

	stop chan struct{}
	wg   sync.WaitGroup
}

type inflightEntry struct {
	seq uint64
	f   raft.ApplyFuture
}

// openReplica starts Raft on the opened store s (its state loaded): the log and
// stable store in s's Pebble, snapshots in dir/raft-snapshots (in memory when the
// store is), the peer port, and the bootstrap or join.
func openReplica(s *Store, conf Replication, dir string, inMemory bool) (*replica, error) {
	if conf.Name == "" || conf.PeerAddress == "" {
		return nil, fmt.Errorf("%w: replication needs a name and a peer address", ErrInvalid)
	}
	if conf.NonVoter && (conf.Join == "" || len(conf.InitialCluster) > 0) {
		return nil, fmt.Errorf("%w: a non-voter joins a running cluster: it needs Join and no initial cluster", ErrInvalid)
	}
	if len(conf.InitialCluster) > 0 && conf.InitialCluster[conf.Name] == "" {
		return nil, fmt.Errorf("%w: the initial cluster does not name this replica (%s)", ErrInvalid, conf.Name)
	}
	var incb [8]byte
	_, _ = rand.Read(incb[:])
	r := &replica{
		s: s, name: conf.Name, addr: conf.PeerAddress, conf: conf,
		inc:       binary.BigEndian.Uint64(incb[:]) | 1,
		log:       s.log.WithField("replica", conf.Name),
		pending:   make(map[uint64][]*request),
		inflight:  make(chan inflightEntry, maxInflight),
		slots:     make(chan struct{}, pipelineDepth),
		appliedCh: make(chan struct{}),
		failedCh:  make(chan struct{}),
		termCh:    make(chan struct{}),
		notify:    make(chan bool, 64),
		info:      make(map[string]memberInfo),
		stop:      make(chan struct{}),
		cli:       &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}},
	}
	r.applied.Store(s.appliedIndex)
	r.fwdq = make(chan *forwardCall, maxInflight)
	r.fwdCtx, r.fwdCancel = context.WithCancel(context.Background())
	var err error
	if r.logs, err = newRaftLog(s.db); err != nil {
		return nil, err
	}
	hlog := newHCLogger(r.log.WithField("component", "raft"))
	if inMemory {
		r.snaps = raft.NewInmemSnapshotStore()
	} else if r.snaps, err = raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, "raft-snapshots"), 2, hlog); err != nil {
		return nil, fmt.Errorf("raft snapshots: %w", err)
	}
	if err := r.recoverSnapshot(); err != nil {
		return nil, err
	}
	if r.layer, err = listenPeer(conf.PeerAddress); err != nil {
		return nil, err
	}
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: r.layer, MaxPool: 4, Timeout: 10 * time.Second, Logger: hlog,
	})
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(conf.Name)
	rc.Logger = hlog
	rc.HeartbeatTimeout = orDuration(conf.HeartbeatTimeout, defaultHeartbeatTimeout)
	rc.ElectionTimeout = orDuration(conf.ElectionTimeout, defaultElectionTimeout)
	rc.LeaderLeaseTimeout = orDuration(conf.LeaderLeaseTimeout, defaultLeaderLeaseTimeout)
	rc.CommitTimeout = orDuration(conf.CommitTimeout, defaultCommitTimeout)
	rc.SnapshotThreshold = orUint(conf.SnapshotThreshold, defaultSnapshotThreshold)
	rc.TrailingLogs = orUint(conf.TrailingLogs, defaultTrailingLogs)
	rc.SnapshotInterval = orDuration(conf.SnapshotInterval, defaultSnapshotInterval)
	rc.BatchApplyCh = true
	rc.NoSnapshotRestoreOnStart = true // the FSM's state is in Pebble, with its applied index
	rc.NotifyCh = r.notify
	logs, err := raft.NewLogCache(128, r.logs)
	if err != nil {
		return nil, errors.Join(err, trans.Close())
	}

	if r.raft, err = raft.NewRaft(rc, fsm{s, r}, logs, r.logs, r.snaps, trans); err != nil {
		return nil, errors.Join(fmt.Errorf("start raft: %w", err), trans.Close())
	}
	r.startHTTP()
	r.wg.Add(1)
	go r.watchLeadership() // r.notify holds what Raft sent meanwhile
	r.waiterWG.Add(1)
	go r.waiter()
	r.wg.Add(1)
	go r.forwarder()

	existing, err := raft.HasExistingState(logs, r.logs, r.snaps)
	if err != nil {
		r.shutdown()
		return nil, fmt.Errorf("raft state: %w", err)
	}
	switch {
	case existing && !conf.NonVoter:
	case existing:
		// A non-voter's entry may have been removed while it was away (the leader
		// drops a dead one): ask again; the leader keeps an entry it still has.
		if err := r.join(conf.Join); err != nil {
			r.shutdown()
			return nil, err
		}
	case len(conf.InitialCluster) > 0:
		var servers []raft.Server
		for name, addr := range conf.InitialCluster {
			servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(name), Address: raft.ServerAddress(addr)})
		}
		sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
		if err := r.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil &&
			!errors.Is(err, raft.ErrCantBootstrap) {
			r.shutdown()
			return nil, fmt.Errorf("bootstrap raft: %w", err)
		}
	case conf.Join != "":
		if err := r.join(conf.Join); err != nil {
			r.shutdown()
			return nil, err
		}
	default:
		r.shutdown()
		return nil, fmt.Errorf("%w: a new replica needs an initial cluster or a member to join", ErrInvalid)
	}
	return r, nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orUint(v, def uint64) uint64 {
	if v > 0 {
		return v
	}
	return def
}

// recoverSnapshot restores the newest snapshot when it is ahead of the FSM's state:
// a crash after a snapshot was installed and before the FSM restored it (Raft does
// not restore at start: NoSnapshotRestoreOnStart).
func (r *replica) recoverSnapshot() error {
	metas, err := r.snaps.List()
	if err != nil || len(metas) == 0 {
		return err
	}
	_, rc, err := r.snaps.Open(metas[0].ID)
	if err != nil {
		return fmt.Errorf("raft snapshot %s: %w", metas[0].ID, err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<20)
	applied, _, err := readSnapshotHeader(br)
	if err != nil {
		return fmt.Errorf("raft snapshot %s: %w", metas[0].ID, err)
	}
	if applied <= r.s.appliedIndex {
		return nil
	}
	r.log.WithField("snapshot", metas[0].ID).Warn("the state is behind the last raft snapshot: restoring it")
	_, rc2, err := r.snaps.Open(metas[0].ID)
	if err != nil {
		return fmt.Errorf("raft snapshot %s: %w", metas[0].ID, err)
	}
	defer rc2.Close()
	if err := r.s.restore(rc2); err != nil {
		return err
	}
	r.applied.Store(r.s.appliedIndex)
	return nil
}

// shutdown stops Raft (in-flight entries get ErrUnknownOutcome), the peer port and
// the replica's goroutines. The committer has stopped.
func (r *replica) shutdown() {
	r.stopRaft()
	close(r.inflight)
	r.waiterWG.Wait()
	r.pmu.Lock()
	for seq, reqs := range r.pending {
		delete(r.pending, seq)
		for _, q := range reqs {
			q.done <- result{err: fmt.Errorf("apply: %w: replica stopped", ErrUnknownOutcome)}
		}
	}
	r.pmu.Unlock()
	_ = r.layer.Close()
	_ = r.http.Close()
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.fwdCancel()
	r.wg.Wait()
	r.cli.CloseIdleConnections()
}

// stopRaft shuts Raft down (and with it the peer transport).
func (r *replica) stopRaft() {
	if r.raft != nil {
		if err := r.raft.Shutdown().Error(); err != nil {
			r.log.WithError(err).Warn("raft shutdown")
		}
	}
}

// fail stops this replica after its FSM could not apply an entry: its state would
// differ from the others'. The store keeps serving reads of what it has.
func (r *replica) fail(err error) {
	r.s.failed = err
	r.failed.Store(&err)
	r.failOnce.Do(func() { close(r.failedCh) })
	r.log.WithError(err).Error("the replica cannot apply the raft log: stopping raft")
	go func() { _ = r.raft.Shutdown().Error() }()
}

// propose is the committer's step in replicated mode: the group becomes one entry,
// proposed without waiting for it (the waiter and the FSM answer).
func (r *replica) propose(group []*request) {
	if st := r.raft.State(); st != raft.Leader {
		<-r.slots
		err := fmt.Errorf("apply: %w", ErrNotLeader)
		if st == raft.Shutdown {
			err = fmt.Errorf("apply: %w", ErrClosed)
		}
		for _, q := range group {
			q.done <- result{err: err}
		}
		return
	}
	if timedGroup(group) {
		now := time.Now()
		for _, q := range group {
			if t := q.timing; t != nil {
				t.Queued, t.Group, t.proposed = now.Sub(t.Start), len(group), now
			}
		}
	}
	r.seq++
	seq := r.seq
	reqs := append([]*request(nil), group...)
	r.pmu.Lock()
	r.pending[seq] = reqs
	r.pmu.Unlock()
	data := encodeEntry(entryOrigin{name: r.name, inc: r.inc, seq: seq}, reqs)
	r.inflight <- inflightEntry{seq: seq, f: r.raft.Apply(data, 0)}
}

// acquire takes a place in the pipeline for the committer's next entry.
func (r *replica) acquire() { r.slots <- struct{}{} }

// takePending removes and returns this replica's requests of an entry it proposed,
// and frees the entry's place in the pipeline: the FSM applies it, the committer may
// propose the next one now (not after the future's answer has gone through Raft and
// the waiter: two goroutine hand-offs, each long on a busy machine).
func (r *replica) takePending(o entryOrigin) []*request {
	if o.name != r.name || o.inc != r.inc {
		return nil
	}
	r.pmu.Lock()
	reqs, ok := r.pending[o.seq]
	delete(r.pending, o.seq)
	r.pmu.Unlock()
	if ok {
		<-r.slots
	}
	return reqs
}

// waiter answers the proposals Raft failed: not appended (ErrNotLeader) or of
// unknown outcome, and frees their places in the pipeline. Successful ones were
// answered by the FSM. Whoever removes an entry from pending frees its place.
func (r *replica) waiter() {
	defer r.waiterWG.Done()
	for e := range r.inflight {
		err := r.await(e.f)
		r.pmu.Lock()
		reqs, ok := r.pending[e.seq]
		delete(r.pending, e.seq)
		r.pmu.Unlock()
		if !ok {
			continue // the FSM applied it (and freed its place)
		}
		<-r.slots
		switch {
		case errors.Is(err, raft.ErrNotLeader):
			err = fmt.Errorf("apply: %w", ErrNotLeader)
		case err != nil:
			err = fmt.Errorf("apply: %w: %w", ErrUnknownOutcome, err)
		default:
			err = fmt.Errorf("apply: %w: the entry was not applied", ErrUnknownOutcome)
		}
		for _, q := range reqs {
			q.done <- result{err: err}
		}
	}
}

// await waits for a future of Raft. A future still queued when Raft shuts down is
// never answered (hashicorp/raft's buffered apply channel): once Raft is shut down,
// it is of unknown outcome.
func (r *replica) await(f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			if r.raft.State() == raft.Shutdown {
				return raft.ErrRaftShutdown
			}
		}
	}
}

// setApplied records the FSM's progress and wakes the waiters.
func (r *replica) setApplied(index uint64) {
	r.applied.Store(index)
	r.appliedMu.Lock()
	close(r.appliedCh)
	r.appliedCh = make(chan struct{})
	r.appliedMu.Unlock()
}

func (r *replica) appliedChanged() <-chan struct{} {
	r.appliedMu.Lock()
	defer r.appliedMu.Unlock()
	return r.appliedCh
}

// appliedThrough reports whether the FSM has applied every entry up to index. The
// entries it never sees (Raft's no-op and barrier entries) need no applying.
func (r *replica) appliedThrough(index uint64) bool {
	a := r.applied.Load()
	if a >= index {
		return true
	}
	if r.raft.AppliedIndex() < index || index-a > 64 {
		return false
	}
	for i := a + 1; i <= index; i++ {
		var l raft.Log
		if err := r.logs.GetLog(i, &l); err != nil || l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			return false
		}
	}
	return true
}

// waitApplied waits until the FSM has applied every entry up to index.
func (r *replica) waitApplied(ctx context.Context, index uint64) error {
	for {
		ch := r.appliedChanged()
		if r.appliedThrough(index) {
			return nil
		}
		if r.failed.Load() != nil {
			return fmt.Errorf("read barrier: %w", *r.failed.Load())
		}
		t := time.NewTimer(5 * time.Millisecond) // entries the FSM never sees do not wake us
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("read barrier: %w", ctx.Err())
		}
		t.Stop()
	}
}

func (r *replica) isLeader() bool { return r.raft.State() == raft.Leader }

// leaderSub is one Leadership channel: transitions queue for it, none is lost.
type leaderSub struct {
	ch    chan bool
	mu    sync.Mutex
	queue []bool
	wake  chan struct{}
}

// leadership returns a new channel of this replica's leadership transitions, which
// starts with true when it is the leader now. Its consumer must keep reading: the
// transitions it has not read are kept in memory.
func (r *replica) leadership() <-chan bool {
	sub := &leaderSub{ch: make(chan bool), wake: make(chan struct{}, 1)}
	r.lmu.Lock()
	if r.lead {
		sub.queue = append(sub.queue, true)
		sub.wake <- struct{}{}
	}
	r.subs = append(r.subs, sub)
	r.lmu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			sub.mu.Lock()
			if len(sub.queue) == 0 {
				sub.mu.Unlock()
				select {
				case <-sub.wake:
					continue
				case <-r.stop:
					return
				}
			}
			v := sub.queue[0]
			sub.queue = sub.queue[1:]
			sub.mu.Unlock()
			select {
			case sub.ch <- v:
			case <-r.stop:
				return
			}
		}
	}()
	return sub.ch
}

// watchLeadership consumes Raft's leadership notifications (Raft blocks on them),
// fans them out and, on becoming the leader, commits a first entry of the term.
func (r *replica) watchLeadership() {
	defer r.wg.Done()
	for {
		var v bool
		select {
		case v = <-r.notify:
		case <-r.stop:
			return
		}
		r.lmu.Lock()
		if v == r.lead {
			r.lmu.Unlock()
			continue
		}
		r.lead = v
		if v {
			r.epoch++
			epoch := r.epoch
			r.wg.Add(1)
			go r.startTerm(epoch)
		}
		close(r.termCh)
		r.termCh = make(chan struct{})
		for _, sub := range r.subs {
			sub.mu.Lock()
			sub.queue = append(sub.queue, v)
			sub.mu.Unlock()
			select {
			case sub.wake <- struct{}{}:
			default:
			}
		}
		r.lmu.Unlock()
		r.log.WithField("leader", v).Info("raft leadership changed")
	}
}

// startTerm commits and applies an empty entry of the new term: until then the
// leader's commit index may be behind what an earlier leader committed.
func (r *replica) startTerm(epoch uint64) {
	defer r.wg.Done()
	err := r.await(r.raft.Apply(encodeEntry(entryOrigin{}, nil), 0))
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if err == nil && r.epoch == epoch && r.lead {
		r.termReady = epoch
		close(r.termCh)
		r.termCh = make(chan struct{})
	}
}

// leaderReady waits until this replica leads with a current commit index; false
// when it is not (or no longer) the leader.
func (r *replica) leaderReady(ctx context.Context) (bool, error) {
	for {
		r.lmu.Lock()
		lead, ready, ch := r.lead, r.lead && r.termReady == r.epoch, r.termCh
		r.lmu.Unlock()
		if !lead || r.raft.State() != raft.Leader {
			return false, nil
		}
		if ready {
			return true, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false, fmt.Errorf("read barrier: %w", ctx.Err())
		}
	}
}

// readIndex is the leader's half of a read barrier: the commit index once the
// leader has confirmed that it still leads.
func (r *replica) readIndex(ctx context.Context) (uint64, error) {
	ok, err := r.leaderReady(ctx)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrNotLeader
	}
	index := r.raft.CommitIndex()
	if err := r.raft.VerifyLeader().Error(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	return index, nil
}

func (r *replica) readBarrier(ctx context.Context) error {
	for {
		index, err := r.readIndex(ctx)
		if errors.Is(err, ErrNotLeader) {
			index, err = r.remoteReadIndex(ctx)
		}
		if err == nil {
			return r.waitApplied(ctx, index)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("read barrier: %w", err)
		}
		// No leader known, or it changed meanwhile: try again shortly.
		select {
		case <-ctx.Done():
			return fmt.Errorf("read barrier: %w (%w)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (r *replica) ready() bool {
	if r.failed.Load() != nil {
		return false
	}
	addr, _ := r.raft.LeaderWithID()
	if addr == "" {
		return false
	}
	if r.raft.State() == raft.Leader {
		r.lmu.Lock()
		ready := r.lead && r.termReady == r.epoch
		r.lmu.Unlock()
		if !ready {
			return false
		}
	}
	return r.appliedThrough(r.raft.CommitIndex())
}

func (r *replica) remove(ctx context.Context, name string) error {
	if r.raft.State() == raft.Leader {
		if err := r.raft.RemoveServer(raft.ServerID(name), 0, 10*time.Second).Error(); err != nil {
			return fmt.Errorf("remove member %s: %w", name, err)
		}
		return nil
	}
	return r.remoteRemove(ctx, name)
}

// selfInfo is what this replica reports of itself.
func (r *replica) selfInfo() memberInfo {
	return memberInfo{Name: r.name, PeerAddress: r.addr, Meta: r.conf.Meta,
		Revision: r.s.Revision(), Applied: r.applied.Load()}
}

func (r *replica) leader() (Member, bool) {
	addr, id := r.raft.LeaderWithID()
	if addr == "" {
		return Member{}, false
	}
	m := Member{Name: string(id), PeerAddress: string(addr), Leader: true, Voter: true, Reachable: true}
	if string(id) == r.name {
		in := r.selfInfo()
		m.Meta, m.Revision = in.Meta, in.Revision
		return m, true
	}
	r.imu.Lock()
	in, ok := r.info[string(id)]
	r.imu.Unlock()
	if ok {
		m.Meta, m.Revision, m.LastContact = in.Meta, in.Revision, in.at
	} else {
		go func() { // learn the leader's meta for the next call
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, _ = r.fetchInfo(ctx, string(id), string(addr))
		}()
	}
	return m, true
}

func (r *replica) members(ctx context.Context) ([]Member, error) {
	f := r.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	_, leaderID := r.raft.LeaderWithID()
	servers := f.Configuration().Servers
	out := make([]Member, len(servers))
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for i, sv := range servers {
		m := Member{Name: string(sv.ID), PeerAddress: string(sv.Address), Leader: sv.ID == leaderID,
			Voter: sv.Suffrage == raft.Voter}
		if string(sv.ID) == r.name {
			in := r.selfInfo()
			m.Meta, m.Revision, m.Reachable = in.Meta, in.Revision, true
			out[i] = m
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if in, err := r.fetchInfo(ctx, string(sv.ID), string(sv.Address)); err == nil {
				m.Meta, m.Revision, m.LastContact, m.Reachable = in.Meta, in.Revision, in.at, true
			}
			out[i] = m
		}()
	}
	wg.Wait()
	return out, nil
}

// admit refuses a transaction whose objects another replica could not decode (a
// follower's transactions are admitted too: Apply forwards them to the leader).
func (r *replica) admit(cmds []Command) error {
	for _, c := range cmds {
		if c.Op == OpCreate || c.Op == OpUpdate {
			if r.s.newObject == nil {
				return fmt.Errorf("apply: %w: a replicated store needs Options.NewObject", ErrInvalid)
			}
			if _, err := r.s.newObject(c.Key.Resource); err != nil {
				return fmt.Errorf("%s %s: %w: %w", opName(c.Op), keyString(c.Key), ErrInvalid, err)
			}
		}
	}
	return nil
}
