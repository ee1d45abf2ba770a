package actors

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kubeactor/kubeactor/actors/scheduler"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// Spans (Options.Tracer): an object actor's handling of a request (create, update,
// binding, delete: the envelope carries the sender's span context and the time it
// was sent) and of a sync, the store apply it makes, and each scheduling round. The
// object remembers its last write's context (tracing.Tracer.Remember) for a later
// reader: the scheduler continues the trace of the write that made a pod pending.

// objectKey is the tracing.ObjectKey value of k.
func objectKey(k persistence.Key) string {
	if k.Namespace == "" {
		return k.Resource + "/" + k.Name
	}
	return k.Resource + "/" + k.Namespace + "/" + k.Name
}

// envelopeOf is the envelope of a request made for ctx (the gateway's request).
func (s *System) envelopeOf(ctx context.Context, key persistence.Key) envelope {
	e := envelope{trace: TraceID(ctx), key: key}
	if s.env.tracer != nil {
		e.span = trace.SpanContextFromContext(ctx)
		e.sent = time.Now()
	}
	return e
}

// envelope is the envelope of a request the actor makes while handling a message.
func (a *objectActor) envelope(key persistence.Key) envelope {
	e := envelope{trace: a.cell.trace, key: key}
	if a.env.tracer != nil {
		a.syncSpan()
		e.span, e.sent = a.cell.span, time.Now()
	}
	return e
}

// traceMsg starts the span of handling a request (op) carried by e; endSpan ends it.
func (a *objectActor) traceMsg(op string, e *envelope) {
	if a.env.tracer == nil {
		return
	}
	parent := context.Background()
	if e.span.IsValid() {
		parent = trace.ContextWithRemoteSpanContext(parent, e.span)
	}
	k := a.cell.key
	if a.cell.spanOp != op || a.cell.spanName == "" {
		a.cell.spanOp, a.cell.spanName = op, k.Resource+" "+op
	}
	_, sp := a.env.tracer.Start(parent, a.cell.spanName)
	if sp.IsRecording() {
		attrs := make([]attribute.KeyValue, 3, 4) // one allocation, the span copies them
		attrs[0] = tracing.ObjectKey.String(a.objectKey())
		attrs[1] = attribute.String("actor.kind", k.Resource)
		attrs[2] = attribute.String("message", op)
		if !e.sent.IsZero() {
			attrs = append(attrs, attribute.String("mailbox.wait", time.Since(e.sent).String()))
		}
		sp.SetAttributes(attrs...)
	}
	a.span = sp
	a.cell.span = sp.SpanContext()
}

// objectKey is the tracing.ObjectKey value of the actor's object, made once.
func (a *objectActor) objectKey() string {
	if a.cell.objKey == "" {
		a.cell.objKey = objectKey(a.cell.key)
	}
	return a.cell.objKey
}

// traceSync prepares the span of a controller's sync, continuing the trace of the
// object's last request; none when there is none. The span starts only when the
// sync does something (syncSpan): a sync that decides nothing (no write, request,
// event, note or message to another actor: a node's sync after a heartbeat) leaves
// no span, and the object's story is its requests and writes.
func (a *objectActor) traceSync() {
	a.creates, a.deletes = 0, 0
	if a.env.tracer == nil || !a.cell.span.IsSampled() {
		return
	}
	a.syncFrom, a.syncStart = a.cell.span, time.Now()
}

// syncSpan starts the span of the sync being handled, dated from the sync's start,
// if traceSync prepared one that has not started: the sync is about to act.
func (a *objectActor) syncSpan() {
	if !a.syncFrom.IsValid() {
		return
	}
	k := a.cell.key
	_, sp := a.env.tracer.Start(trace.ContextWithRemoteSpanContext(context.Background(), a.syncFrom), k.Resource+" sync",
		trace.WithTimestamp(a.syncStart),
		trace.WithAttributes(tracing.ObjectKey.String(a.objectKey()), attribute.String("actor.kind", k.Resource),
			attribute.String("message", "sync")))
	a.syncFrom = trace.SpanContext{}
	a.span = sp
	a.cell.span = sp.SpanContext()
}

// endSpan ends the span of the message handled, if any; a sync that did nothing
// has none.
func (a *objectActor) endSpan() {
	a.syncFrom = trace.SpanContext{}
	if a.span == nil {
		return
	}
	if a.creates+a.deletes > 0 && a.span.IsRecording() {
		a.span.SetAttributes(attribute.Int("decided.creates", a.creates), attribute.Int("decided.deletes", a.deletes))
	}
	a.span.End()
	a.span = nil
}

// traceApply starts the span of a store apply, a child of the message's span. It
// remembers the write's trace before the write is visible, so a reader woken by
// the change (the scheduler) finds it.
func (a *objectActor) traceApply(op persistence.Op) trace.Span {
	a.syncSpan()
	if a.env.tracer != nil && op != persistence.OpDelete {
		a.env.tracer.Remember(a.objectKey(), a.cell.span)
	}
	if a.span == nil || !a.span.IsRecording() {
		return nil
	}
	_, sp := a.env.tracer.Start(trace.ContextWithSpan(context.Background(), a.span), "store apply")
	return sp // its attributes, the op's among them, are set in one call when it ends (applied)
}

// timed asks the store where the apply's time goes when its span records (sp is
// then not nil): a.timing, which applied puts on the span. An apply not traced
// allocates nothing here.
func (a *objectActor) timed(ctx context.Context, sp trace.Span) context.Context {
	if sp == nil {
		return ctx
	}
	a.timing = &persistence.ApplyTiming{}
	return persistence.WithTiming(ctx, a.timing)
}

// applied ends the apply's span with its outcome and the store's timing; the trace
// of a deleted object is forgotten.
func (a *objectActor) applied(sp trace.Span, op persistence.Op, rev int64, err error) {
	if sp != nil {
		res := attribute.Int64("revision", rev)
		if err != nil {
			res = attribute.String("error", err.Error())
		}
		storeSteps(a.env.tracer, sp, a.timing, attribute.String("op", opName(op)), res)
		a.timing = nil
		sp.End()
	}
	if a.env.tracer != nil && err == nil && op == persistence.OpDelete {
		a.env.tracer.Forget(a.objectKey())
	}
}

// storeSteps puts the apply's op and outcome (res) and where its time went (t, when
// the store measured it) on its span sp, in one call and only the steps it took, and
// the steps outside this process as its children, placed in time by the timing:
// "forward to leader" (a follower's round trip to the leader) and "raft replicate"
// (from the entry's proposal until it was committed on a majority).
func storeSteps(tr *tracing.Tracer, sp trace.Span, t *persistence.ApplyTiming, op, res attribute.KeyValue) {
	measured := t != nil && !t.Start.IsZero() // not asked, or not queued: nothing was measured
	n := 3
	if measured {
		n += 2 + btoi(t.Group > 0) + btoi(t.Fsync > 0) + btoi(t.Replicate > 0) + 2*btoi(t.Forwarded)
	}
	attrs := make([]attribute.KeyValue, 0, n) // one allocation, the span copies them
	attrs = append(attrs, op, attribute.Int("commands", 1), res)
	if !measured {
		sp.SetAttributes(attrs...)
		return
	}
	attrs = append(attrs, attribute.Float64("store.queue_ms", millis(t.Queued)))
	if t.Group > 0 {
		attrs = append(attrs, attribute.Int("store.group", t.Group))
	}
	if t.Fsync > 0 {
		attrs = append(attrs, attribute.Float64("store.fsync_ms", millis(t.Fsync)))
	}
	if t.Replicate > 0 {
		attrs = append(attrs, attribute.Float64("store.replicate_ms", millis(t.Replicate)))
	}
	attrs = append(attrs, attribute.Float64("store.apply_ms", millis(t.Apply)))
	if t.Forwarded {
		attrs = append(attrs, attribute.Bool("store.forwarded", true), attribute.Float64("store.forward_ms", millis(t.Forward)))
	}
	sp.SetAttributes(attrs...)
	parent := trace.ContextWithSpan(context.Background(), sp)
	if t.Forwarded && t.Forward > 0 {
		_, fw := tr.Start(parent, "forward to leader", trace.WithTimestamp(t.Start))
		fw.End(trace.WithTimestamp(t.Start.Add(t.Forward)))
	}
	if t.Replicate > 0 {
		at := t.Start.Add(t.Queued)
		_, rp := tr.Start(parent, "raft replicate", trace.WithTimestamp(at),
			trace.WithAttributes(attribute.Int("store.group", t.Group)))
		rp.End(trace.WithTimestamp(at.Add(t.Replicate)))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// millis is d in milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// traceRound starts the span of a scheduling round for the pod key (namespace/name),
// continuing the trace of the pod's last write.
func (s *schedulerActor) traceRound(key string) {
	if s.env.tracer == nil {
		return
	}
	if s.span != nil { // a round that ended without a decision
		s.span.End()
	}
	k := objectKey(podKey(splitKey(key)))
	parent := context.Background()
	if sc := s.env.tracer.Recall(k); sc.IsValid() {
		parent = trace.ContextWithRemoteSpanContext(parent, sc)
	}
	_, s.span = s.env.tracer.Start(parent, "scheduler round",
		trace.WithAttributes(tracing.ObjectKey.String(k), attribute.String("actor.kind", "scheduler")))
	s.bidTime = s.bidTime[:0]
}

// bidTimed notes, for a traced round, how long the shard of msg took to bid: from
// the round's start until its answer arrived (its mailbox wait and its Decide).
func (s *schedulerActor) bidTimed(r *scheduler.Round, msg *bidReply) {
	if s.span == nil || !s.span.IsRecording() || msg.seq != r.Seq || msg.shard < 0 {
		return
	}
	for len(s.bidTime) <= msg.shard {
		s.bidTime = append(s.bidTime, -1)
	}
	if s.bidTime[msg.shard] < 0 {
		s.bidTime[msg.shard] = time.Since(s.began)
	}
}

// roundDone ends the round's span with its decision; it returns the span context the
// binding carries.
func (s *schedulerActor) roundDone(d scheduler.Decision, result string) trace.SpanContext {
	sp := s.span
	s.span = nil
	if sp == nil {
		return trace.SpanContext{}
	}
	if sp.IsRecording() {
		attrs := []attribute.KeyValue{attribute.Int("candidates", d.Nodes), attribute.Int("feasible", d.Feasible),
			attribute.String("result", result)}
		if d.Node != "" {
			attrs = append(attrs, attribute.String("node", d.Node), attribute.Float64("score", d.Score))
		}
		if len(d.Reasons) > 0 {
			attrs = append(attrs, attribute.String("rejected", fmt.Sprint(d.Reasons)))
		}
		if len(s.bidTime) > 0 { // by shard, in milliseconds
			ms := make([]float64, len(s.bidTime))
			for i, t := range s.bidTime {
				ms[i] = millis(t)
			}
			attrs = append(attrs, attribute.Float64Slice("shard.bid_ms", ms))
		}
		sp.SetAttributes(attrs...)
	}
	sp.End()
	return sp.SpanContext()
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

// updateOp names an update by its subresource ("binding", "status"), or "update".
func updateOp(sub string) string {
	if sub == "" {
		return "update"
	}
	return sub
}
