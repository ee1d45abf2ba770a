package persistence

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// A follower's Apply forwards its transaction to the leader's peer port:
//
//	POST /raft/apply, body: the transactions as in a Raft entry (encodeEntry; the
//	  origin names the follower), objects as JSON with the placeholder resourceVersion
//	200, body: uvarint count, then per transaction: revision (uvarint), the
//	  sentinel errors it wraps (uvarint bit set, forwardedErrors), message (string)
//
// The leader applies each transaction through its committer (group commit, the
// preconditions checked in the FSM); the follower then waits until its own FSM has
// applied the revision and answers with its own objects.

// maxForwardBytes bounds a forwarded request's body.
const maxForwardBytes = 64 << 20

// forwardedErrors are the sentinels an error keeps across the hop, by bit.
var forwardedErrors = []error{ErrNotFound, ErrAlreadyExists, ErrConflict, ErrInvalid,
	ErrUnknownOutcome, ErrNotLeader, ErrClosed, ErrCompacted, context.Canceled, context.DeadlineExceeded, ErrClaimed}

// remoteError is an error of the leader as the follower returns it: the leader's
// message, and the sentinels it wrapped (for errors.Is).
type remoteError struct {
	msg  string
	errs []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.errs }

func errorBits(err error) uint64 {
	var bits uint64
	for i, s := range forwardedErrors {
		if errors.Is(err, s) {
			bits |= 1 << i
		}
	}
	return bits
}

func remoteErr(bits uint64, msg string) error {
	e := &remoteError{msg: msg}
	for i, s := range forwardedErrors {
		if bits&(1<<i) != 0 {
			e.errs = append(e.errs, s)
		}
	}
	return e
}

// encodeResults encodes the leader's answers to forwarded transactions.
func encodeResults(results []result) []byte {
	b := binary.AppendUvarint(nil, uint64(len(results)))
	for _, res := range results {
		b = binary.AppendUvarint(b, uint64(res.rev))
		if res.err == nil {
			b = binary.AppendUvarint(b, 0)
			b = appendString(b, "")
			continue
		}
		b = binary.AppendUvarint(b, errorBits(res.err))
		b = appendString(b, res.err.Error())
	}
	return b
}

// decodeResults decodes the answers to n forwarded transactions.
func decodeResults(b []byte, n int) ([]result, error) {
	d := decoder{b: b}
	if m := d.uvarint(); d.err == nil && m != uint64(n) {
		return nil, fmt.Errorf("%d answers to %d transactions", m, n)
	}
	out := make([]result, n)
	for i := range out {
		out[i].rev = int64(d.uvarint())
		bits, msg := d.uvarint(), d.string()
		if msg != "" || bits != 0 {
			out[i].err = remoteErr(bits, msg)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}

// handleApply is the leader's half of a follower's Apply: it applies each forwarded
// transaction through the committer and answers their revisions or errors.
func (r *replica) handleApply(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxForwardBytes+1))
	if err != nil {
		writeError(w, fmt.Errorf("apply: read the forwarded transactions: %w", err))
		return
	}
	if len(body) > maxForwardBytes {
		writeError(w, fmt.Errorf("apply: %w: forwarded transactions over %d bytes", ErrInvalid, maxForwardBytes))
		return
	}
	_, d, err := decodeEntryHeader(body)
	var txns []*request
	if err == nil {
		txns, err = decodeTxns(&d)
	}
	if err != nil {
		writeError(w, fmt.Errorf("apply: %w: forwarded transactions: %w", ErrInvalid, err))
		return
	}
	results := make([]result, len(txns))
	switch {
	case !r.isLeader():
		for i := range results {
			results[i].err = fmt.Errorf("apply: %w", ErrNotLeader)
		}
	default:
		bad := r.s.decodeObjects(txns) != nil // then each alone: which ones fail
		queued := make([]bool, len(txns))
		for i, t := range txns {
			t.done = make(chan result, 1)
			if bad {
				if err := r.s.decodeObjects([]*request{t}); err != nil {
					results[i].err = fmt.Errorf("apply: %w: %w", ErrInvalid, err)
					continue
				}
			}
			if results[i].err = checkDecoded(t); results[i].err != nil {
				continue
			}
			if results[i].err = r.s.enqueue(req.Context(), t); results[i].err == nil {
				queued[i] = true
			}
		}
		for i, t := range txns {
			if queued[i] {
				results[i] = <-t.done
			}
			// This store closing (not proposed) is, for the follower whose store is
			// open, a leader gone: it may try again with the next one.
			if err := results[i].err; errors.Is(err, ErrClosed) && !errors.Is(err, ErrUnknownOutcome) {
				results[i].err = fmt.Errorf("apply: %w: the leader %s is stopping (%v)", ErrNotLeader, r.name, err)
			}
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(encodeResults(results))
}

// checkDecoded checks a forwarded transaction's objects as Apply checks a caller's.
func checkDecoded(t *request) error {
	for i, c := range t.cmds {
		if c.Op != OpCreate && c.Op != OpUpdate {
			continue
		}
		uid, err := checkObject(c)
		if err != nil {
			return err
		}
		if uid != t.uids[i] {
			return fmt.Errorf("%s %s: %w: uid %q, object's %q", opName(c.Op), keyString(c.Key), ErrInvalid, t.uids[i], uid)
		}
	}
	return nil
}

// forwardDepth is how many batches of forwarded transactions a follower keeps in
// flight to the leader: while they are, the next batch gathers.
const forwardDepth = 4

// forwardCall is one transaction a follower's Apply forwards.
type forwardCall struct {
	q     *request
	state atomic.Int32 // callQueued, then callSent (by the forwarder) or callAbandoned (by the caller)
	done  chan result  // the leader's answer (one)
}

const (
	callQueued int32 = iota
	callSent
	callAbandoned
)

// forwardApply is a follower's Apply: the forwarder sends the prepared transaction q
// to the leader, with the others queued meanwhile; once the leader answered its
// revision, this replica waits until its FSM has applied it, and answers with its
// own objects.
func (r *replica) forwardApply(ctx context.Context, q *request) (int64, []runtime.Object, error) {
	if err := r.failed.Load(); err != nil {
		return 0, nil, fmt.Errorf("apply: %w", *err)
	}
	if r.raft.State() == raft.Shutdown {
		return 0, nil, fmt.Errorf("apply: %w", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, fmt.Errorf("apply: %w", err)
	}
	if addr, id := r.raft.LeaderWithID(); addr == "" || string(id) == r.name {
		return 0, nil, fmt.Errorf("apply: %w: no leader known", ErrNotLeader)
	}
	c := &forwardCall{q: q, done: make(chan result, 1)}
	select {
	case r.fwdq <- c:
	case <-ctx.Done():
		return 0, nil, fmt.Errorf("apply: %w", ctx.Err())
	case <-r.stop:
		return 0, nil, fmt.Errorf("apply: %w", ErrClosed)
	}
	var res result
	select {
	case res = <-c.done:
	case <-ctx.Done():
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return 0, nil, fmt.Errorf("apply: %w", ctx.Err())
		}
		return 0, nil, fmt.Errorf("apply: %w: forwarded to the leader: %w", ErrUnknownOutcome, ctx.Err())
	case <-r.stop:
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return 0, nil, fmt.Errorf("apply: %w", ErrClosed)
		}
		return 0, nil, fmt.Errorf("apply: %w: forwarded to the leader: %w", ErrUnknownOutcome, ErrClosed)
	}
	var answered time.Time
	if t := q.timing; t != nil {
		answered = time.Now()
		t.Forwarded, t.Forward = true, answered.Sub(t.Start)
	}
	if res.err != nil {
		return 0, nil, res.err
	}
	if err := r.waitRevision(ctx, res.rev); err != nil {
		return 0, nil, fmt.Errorf("apply: %w: committed at revision %d by the leader, not applied here: %w",
			ErrUnknownOutcome, res.rev, err)
	}
	if t := q.timing; t != nil {
		t.Apply, t.Revision = time.Since(answered), res.rev
	}
	return res.rev, r.s.objectsAt(res.rev, q), nil
}

// forwarder sends the forwarded transactions to the leader in batches (one request,
// one group on the leader), with up to forwardDepth batches in flight: it takes
// every transaction queued when a place is free, as the committer does.
func (r *replica) forwarder() {
	defer r.wg.Done()
	slots := make(chan struct{}, forwardDepth)
	for {
		var first *forwardCall
		select {
		case first = <-r.fwdq:
		case <-r.stop:
			return
		}
		select {
		case slots <- struct{}{}:
		case <-r.stop:
			return
		}
		batch := make([]*forwardCall, 0, 16)
		size := 0
		take := func(c *forwardCall) {
			if c.state.CompareAndSwap(callQueued, callSent) {
				batch = append(batch, c)
				size += c.q.size()
			}
		}
		take(first)
	drain:
		for len(batch) < maxGroup && size < maxEntryBytes {
			select {
			case c := <-r.fwdq:
				take(c)
			default:
				break drain
			}
		}
		if len(batch) == 0 {
			<-slots
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() { <-slots }()
			r.sendBatch(batch)
		}()
	}
}

// sendBatch forwards a batch to the current leader and answers its callers.
func (r *replica) sendBatch(batch []*forwardCall) {
	answer := func(err error) {
		for _, c := range batch {
			c.done <- result{err: err}
		}
	}
	addr, id := r.raft.LeaderWithID()
	if addr == "" || string(id) == r.name {
		answer(fmt.Errorf("apply: %w: no leader known", ErrNotLeader))
		return
	}
	reqs := make([]*request, len(batch))
	for i, c := range batch {
		reqs[i] = c.q
	}
	body := encodeEntry(entryOrigin{name: r.name, inc: r.inc}, reqs)
	ctx, cancel := context.WithTimeout(r.fwdCtx, forwardTimeout)
	defer cancel()
	res, err := r.postApply(ctx, string(id), string(addr), body, len(batch))
	if err != nil {
		answer(err)
		return
	}
	for i, c := range batch {
		c.done <- res[i]
	}
}

// forwardTimeout bounds one forwarded batch's round trip (its callers' contexts
// bound their own waits).
const forwardTimeout = 60 * time.Second

// postApply sends forwarded transactions to the leader and returns its n answers.
// An error before the request was written wraps ErrNotLeader (nothing was sent);
// after, ErrUnknownOutcome.
func (r *replica) postApply(ctx context.Context, leader, addr string, body []byte, n int) ([]result, error) {
	var wrote atomic.Bool
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, "http://"+addr+"/raft/apply", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("apply: forward to %s: %w", leader, err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := r.cli.Do(req)
	if err != nil {
		switch {
		case wrote.Load():
			return nil, fmt.Errorf("apply: forward to %s: %w: %w", leader, ErrUnknownOutcome, err)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("apply: %w", ctx.Err())
		default:
			return nil, fmt.Errorf("apply: forward to %s: %w: %w", leader, ErrNotLeader, err)
		}
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("apply: forward to %s: %w: %w", leader, ErrUnknownOutcome, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		out, err := decodeResults(msg, n)
		if err != nil {
			return nil, fmt.Errorf("apply: forward to %s: %w: the answer: %w", leader, ErrUnknownOutcome, err)
		}
		return out, nil
	case http.StatusServiceUnavailable:
		return nil, fmt.Errorf("apply: forward to %s: %w: %s", leader, ErrNotLeader, strings.TrimSpace(string(msg)))
	case http.StatusBadRequest:
		return nil, fmt.Errorf("apply: forward to %s: %w: %s", leader, ErrInvalid, strings.TrimSpace(string(msg)))
	default:
		return nil, fmt.Errorf("apply: forward to %s: %w: %s: %s", leader, ErrUnknownOutcome, resp.Status, strings.TrimSpace(string(msg)))
	}
}

// waitRevision waits until the replica has published revision rev (woken by each
// publish through the change log's notification), ctx ends, the store closes or
// its FSM fails.
func (r *replica) waitRevision(ctx context.Context, rev int64) error {
	s := r.s
	for {
		v := s.changes.Load()
		if s.rev.Load() >= rev {
			return nil
		}
		if v.shut {
			return ErrClosed
		}
		select {
		case <-v.notify:
		case <-r.failedCh:
			return *r.failed.Load()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// objectsAt returns the objects q's commands stored at revision rev (nil for
// deletes), as this store holds them: the items of the change log's events at rev,
// shared with the cache. Should those events be gone (compacted, or a snapshot
// installed meanwhile), the objects q carried, with their resourceVersion set.
func (s *Store) objectsAt(rev int64, q *request) []runtime.Object {
	objs := make([]runtime.Object, len(q.cmds))
	v := s.changes.Load()
	lo, hi := v.after(rev-1)-v.firstSeq, v.after(rev)-v.firstSeq
	evs := v.events[lo:hi]
	ok := len(evs) == len(q.cmds)
	for i := 0; ok && i < len(evs); i++ {
		ok = evs[i].Item.Key == q.cmds[i].Key && (evs[i].Type == Deleted || !evs[i].Item.lean()) // not lean (shedEncodings, sweepDecoded)
	}
	if ok {
		for i, ev := range evs {
			if ev.Type != Deleted {
				objs[i] = ev.Item.Object()
			}
		}
		return objs
	}
	for i, c := range q.cmds {
		if c.Op == OpCreate || c.Op == OpUpdate {
			if acc, err := meta.Accessor(c.Object); err == nil {
				acc.SetResourceVersion(fmt.Sprint(rev))
			}
			objs[i] = c.Object
		}
	}
	return objs
}
