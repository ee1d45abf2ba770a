package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/actors/event"
	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/actors/scheduler"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// The scheduler: one scheduler actor decides, N shard actors bid (with one shard,
// the scheduler actor bids itself, see localDecisions).
//
// The scheduler actor owns the scheduler.Cache, so it is the only writer of every
// NodeInfo. For each pending pod it builds the pod's context once and asks every
// shard for a bid, passing the nodes changed since the previous round (the last
// decision's assume among them); a shard keeps its nodes' bids per pod class
// (scheduler.Shard), re-bids the changed nodes of the pod's class, reading the
// cache's NodeInfos without writing them, and answers its own decision. While a round is out
// the scheduler changes nothing in the cache: messages that would (store input, bind
// answers, timers) wait and are handled once the last bid is in. It then merges the
// shards' decisions in shard order, assumes the pod on the winner and applies the
// decision as a Binding (pod.Bind, as the API's pods/binding does: spec.nodeName, the
// decision as an annotation, PodScheduled=True), sending the bound pod to the pod's
// actor with the pod's uid and revision as preconditions: the next round already
// counts the pod, so two decisions never overcommit a node.
//
// Inputs come from four goroutines that read a snapshot of nodes, services,
// replication controllers and pods and then follow the change log from its
// revision. A failed shard fails the scheduler, whose supervisor restarts it with
// fresh snapshots.

// Timing of the scheduler (the backoff of unschedulable pods is scheduler.Queue's).
const (
	assumeTTL   = 30 * time.Second // an assumed pod whose binding is not observed by then is dropped
	expireEvery = 5 * time.Second
)

const schedulerComponent = "default-scheduler"

// schedulerConfig is the scheduler's part of Options, checked at Start.
type schedulerConfig struct {
	shards          int
	policy          scheduler.Policy
	seed            int64
	scheduledEvents bool
}

func newSchedulerConfig(opts Options) (*schedulerConfig, error) {
	c := &schedulerConfig{shards: opts.SchedulerShards, seed: opts.SchedulerSeed, scheduledEvents: !opts.SchedulerQuiet}
	if c.shards <= 0 {
		c.shards = 1
	}
	c.policy = scheduler.DefaultPolicy()
	if opts.SchedulerPolicy != nil {
		p, err := scheduler.ParsePolicy(opts.SchedulerPolicy)
		if err != nil {
			return nil, fmt.Errorf("scheduler policy: %w", err)
		}
		c.policy = p
	}
	return c, nil
}

// schedulerProps builds the scheduler actor. A failing shard escalates: the scheduler
// restarts as a whole and reloads its view from the store.
func schedulerProps(e *env) *actor.Props {
	escalate := actor.NewOneForOneStrategy(0, time.Second, func(reason any) actor.Directive {
		e.log.WithField("reason", fmt.Sprint(reason)).Error("scheduler shard failed")
		return actor.EscalateDirective
	})
	return actor.PropsFromProducer(func() actor.Actor { return newSchedulerActor(e) },
		actor.WithSupervisor(escalate), actor.WithDispatcher(longTurns{e.workers}), e.stats.scheduler.mailbox(),
		actor.WithReceiverMiddleware(e.receiveWire)) // its bindings' answers may come from another member
}

type schedulerActor struct {
	env    *env
	cfg    *schedulerConfig
	log    logrus.FieldLogger
	cache  *scheduler.Cache
	shards []*actor.PID
	local  *scheduler.Shard // with one shard: bid in the scheduler's own turn, no shard actor
	salt   uint64           // of the local shard's tie-breaks, as a shard actor's would be
	stale  bool             // the node set changed: shards get new slices before the next round

	stopInputs context.CancelFunc
	inputs     sync.WaitGroup
	loaded     map[string]bool     // resources whose first snapshot arrived
	services   map[string]struct{} // namespace/name of the services in the cache
	rcs        map[string]struct{} // namespace/name of the replication controllers in the cache

	queue   *scheduler.Queue       // pods waiting for a decision, queued or backing off
	waiting map[string]waitingPod  // the newest version the inputs gave of each pending pod
	binds   map[string]*binding    // bindings sent, not yet answered
	span    trace.Span             // the round's span, when traced (tracing.go)
	bidTime []time.Duration        // by shard: from the round's start to its bid, when traced
	changed bool                   // room appeared: retry the backing-off pods now
	events  event.Aggregator       // combines a pod's FailedScheduling events
	budget  *scheduler.EventBudget // rate of FailedScheduling writes; holds the excess per pod

	round    *scheduler.Round
	began    time.Time // the round's start, on the real clock (stats.go)
	seq      uint64
	deferred []any // messages that arrived during a round
	resumed  bool  // a schedNext is in the mailbox

	retryTimer  Timer
	retryAt     time.Time
	expireTimer Timer
	flushTimer  Timer
	flushAt     time.Time
}

// waitingPod is a pending pod as the pods' input last gave it, with its revision:
// what the next decision about it binds, with that revision as the precondition. A
// decision reads it rather than the store, whose lock the committer holds while it
// publishes each group: at the envelope's size the scheduler spent a quarter of its
// time waiting there. A version already superseded fails the binding's precondition,
// and the retry reads the store.
type waitingPod struct {
	pod *corev1.Pod
	rev int64
}

type binding struct {
	pod      *corev1.Pod
	decision scheduler.Decision
}

func newSchedulerActor(e *env) *schedulerActor {
	return &schedulerActor{
		env:      e,
		cfg:      e.sched,
		log:      e.log.WithField("component", schedulerComponent),
		cache:    scheduler.NewCache(),
		loaded:   make(map[string]bool),
		services: make(map[string]struct{}),
		rcs:      make(map[string]struct{}),
		queue:    scheduler.NewQueue(),
		waiting:  make(map[string]waitingPod),
		binds:    make(map[string]*binding),
		budget:   scheduler.NewEventBudget(scheduler.EventRate, scheduler.EventBurst, scheduler.MaxHeldEvents),
	}
}

// Receive defers what would change the cache while a round is out, then starts the
// next round if none is.
func (s *schedulerActor) Receive(ctx actor.Context) {
	st := s.env.stats
	defer st.scheduler.handled(time.Now())
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		s.start(ctx)
	case *actor.Restarting:
		st.scheduler.restarted()
		s.stop()
		return
	case *actor.Stopping:
		s.stop()
		return
	case *bidReply:
		s.bidIn(ctx, msg)
	case *schedInput, *reply, *schedRetry, *schedExpire:
		if s.round != nil {
			s.deferred = append(s.deferred, msg)
			return
		}
		s.handle(ctx, msg)
	case *schedNext: // the turn's decisions ran out: go on after the inputs queued since
		s.resumed = false
	case *schedFlush: // sends events only: the cache is not touched
		s.flushTimer = nil
		s.flushEvents(ctx)
	case *ping:
		ctx.Respond(&pong{})
	}
	s.next(ctx)
	st.sched.pending.Store(int64(s.queue.Len()))
}

func (s *schedulerActor) start(ctx actor.Context) {
	if s.cfg.shards == 1 {
		s.local, s.salt = scheduler.NewShard(&s.cfg.policy), uint64(s.cfg.seed)+1
	} else {
		s.shards = make([]*actor.PID, s.cfg.shards)
	}
	for i := range s.shards {
		salt := uint64(s.cfg.seed) + uint64(i) + 1
		props := actor.PropsFromProducer(func() actor.Actor {
			return &shardActor{shard: scheduler.NewShard(&s.cfg.policy), salt: salt, stats: s.env.stats.shards}
		}, actor.WithDispatcher(s.env.workers), s.env.stats.shards.mailbox())
		s.shards[i] = ctx.Spawn(props)
	}
	s.stale = true
	in, cancel := context.WithCancel(context.Background())
	s.stopInputs = cancel
	self := ctx.Self()
	inputs := schedulerInputs
	if _, ok := s.env.managers["persistentvolumeclaims"]; ok {
		inputs = append(inputs[:len(inputs):len(inputs)], "persistentvolumeclaims") // a bound claim retries the pods backing off
	}
	for _, r := range inputs {
		if _, ok := s.env.managers[r]; !ok && r == "replicationcontrollers" {
			s.loaded[r] = true // a system without RCs: no RC groups pods
			continue
		}
		s.inputs.Add(1)
		go func() {
			defer s.inputs.Done()
			s.env.follow(in, r, self)
		}()
	}
	s.armExpire(ctx)
}

func (s *schedulerActor) stop() {
	if s.stopInputs != nil {
		s.stopInputs()
		s.inputs.Wait()
		s.stopInputs = nil
	}
	for _, t := range []Timer{s.retryTimer, s.expireTimer, s.flushTimer} {
		if t != nil {
			t.Stop()
		}
	}
}

// schedulerInputs are the resources the scheduler follows: replication controllers
// for their selectors (SelectorSpreadPriority spreads an RC's pods).
var schedulerInputs = []string{"nodes", "services", "replicationcontrollers", "pods"}

// follow sends the scheduler a snapshot of one resource and then the change log after
// it, until ctx ends. A watcher that falls behind the log starts over with a snapshot.
func (e *env) follow(ctx context.Context, resource string, to *actor.PID) {
	err := e.store.Follow(ctx, resource, persistence.FromSnapshot, func(sn *persistence.Snapshot, behind bool) {
		if behind {
			e.log.WithField("resource", resource).Warn("scheduler input fell behind: reloading")
		}
		var items []*persistence.Item
		sn.Ascend("", "", func(it *persistence.Item) bool {
			items = append(items, it)
			return true
		})
		e.root.Send(to, &schedInput{resource: resource, snapshot: true, items: items})
	}, func(evs []persistence.Event) {
		e.root.Send(to, &schedInput{resource: resource, events: evs})
	})
	if err != nil {
		e.log.WithFields(logrus.Fields{"resource": resource, "error": err}).Error("scheduler watch")
	}
}

// handle applies a message that may change the cache (never during a round).
func (s *schedulerActor) handle(ctx actor.Context, msg any) {
	switch msg := msg.(type) {
	case *schedInput:
		s.input(msg)
	case *reply:
		s.bound(ctx, msg)
	case *schedRetry:
		s.retryTimer = nil
		// With no node no pod fits, and the first node to come retries every pod
		// backing off (nodeIn sets s.changed): until then their backoffs wait for it
		// rather than end in rounds certain to fail (thousands of pods created with no
		// node would otherwise cost a round and an event offer each per backoff step).
		if len(s.cache.Nodes()) == 0 {
			break
		}
		if next := s.queue.RetryDue(s.env.now()); !next.IsZero() {
			s.armRetry(ctx, next)
		}
	case *schedExpire:
		for _, key := range s.cache.Expire(s.env.now(), assumeTTL) {
			s.log.WithField("pod", key).Warn("binding not observed: assumption expired")
			delete(s.binds, key)
			s.queue.Add(key)
		}
		s.armExpire(ctx)
	}
	if s.changed {
		s.changed = false
		s.queue.RetryAll()
	}
}

func (s *schedulerActor) ready() bool {
	for _, r := range schedulerInputs {
		if !s.loaded[r] {
			return false
		}
	}
	return true
}

// input applies a snapshot or a batch of events of one resource to the cache.
func (s *schedulerActor) input(in *schedInput) {
	if in.snapshot {
		s.reset(in)
		for _, it := range in.items {
			s.apply(in.resource, persistence.Added, it)
		}
		s.loaded[in.resource] = true
		return
	}
	for _, ev := range in.events {
		s.apply(in.resource, ev.Type, ev.Item)
	}
}

// reset forgets what a snapshot no longer holds (after the input fell behind).
func (s *schedulerActor) reset(in *schedInput) {
	if !s.loaded[in.resource] {
		return
	}
	present := make(map[string]bool, len(in.items))
	for _, it := range in.items {
		present[namespacedName(it.Key)] = true
	}
	switch in.resource {
	case "nodes":
		for _, n := range slices.Clone(s.cache.Nodes()) {
			if !present["/"+n.Name()] {
				s.cache.RemoveNode(n.Name())
				s.stale = true
			}
		}
	case "services":
		for k := range s.services {
			if !present[k] {
				ns, name, _ := strings.Cut(k, "/")
				s.cache.RemoveService(ns, name)
				delete(s.services, k)
			}
		}
	case "replicationcontrollers":
		for k := range s.rcs {
			if !present[k] {
				ns, name, _ := strings.Cut(k, "/")
				s.cache.RemoveController(ns, name)
				delete(s.rcs, k)
			}
		}
	case "pods":
		for _, k := range s.cache.Pods() {
			if _, binding := s.binds[k]; !present[k] && !binding {
				s.cache.DeletePod(k)
				s.changed = true
			}
		}
		for _, k := range s.queue.Keys() {
			if !present[k] {
				s.queue.Drop(k)
				s.budget.Drop(k)
			}
		}
		for k := range s.waiting {
			if !present[k] {
				delete(s.waiting, k)
			}
		}
	}
}

func namespacedName(k persistence.Key) string { return k.Namespace + "/" + k.Name }

func (s *schedulerActor) apply(resource string, typ persistence.EventType, it *persistence.Item) {
	switch o := it.Object().(type) {
	case *corev1.Node:
		s.nodeIn(typ, o)
	case *corev1.Service:
		key := namespacedName(persistence.Key{Namespace: o.Namespace, Name: o.Name})
		if typ == persistence.Deleted {
			s.cache.RemoveService(o.Namespace, o.Name)
			delete(s.services, key)
			return
		}
		s.cache.SetService(o)
		s.services[key] = struct{}{}
	case *corev1.ReplicationController:
		key := namespacedName(persistence.Key{Namespace: o.Namespace, Name: o.Name})
		if typ == persistence.Deleted {
			s.cache.RemoveController(o.Namespace, o.Name)
			delete(s.rcs, key)
			return
		}
		s.cache.SetController(o)
		s.rcs[key] = struct{}{}
	case *corev1.Pod:
		s.podIn(typ, o, it.Revision)
	case *corev1.PersistentVolumeClaim:
		if typ != persistence.Deleted && o.Status.Phase == corev1.ClaimBound {
			s.changed = true // pods waiting for it (VolumeClaimsBound) may fit now
		}
	}
}

func (s *schedulerActor) nodeIn(typ persistence.EventType, node *corev1.Node) {
	old := s.cache.Node(node.Name)
	if typ == persistence.Deleted {
		if old != nil {
			s.cache.RemoveNode(node.Name)
			s.stale = true
		}
		return
	}
	switch {
	case old == nil:
		s.stale, s.changed = true, true
	case scheduler.NodeChanged(old, node):
		s.changed = true
	}
	s.cache.SetNode(node)
}

func (s *schedulerActor) podIn(typ persistence.EventType, pod *corev1.Pod, rev int64) {
	key := scheduler.PodKey(pod)
	delete(s.waiting, key)
	if typ == persistence.Deleted {
		if pod.Spec.NodeName != "" || s.cache.IsAssumed(key) {
			s.changed = true // its room is free
		}
		s.cache.DeletePod(key)
		s.queue.Drop(key)
		s.budget.Drop(key)
		return
	}
	if pod.Spec.NodeName != "" {
		if n := s.cache.Node(pod.Spec.NodeName); n != nil && n.HasPod(key) && podpkg.Terminal(pod) {
			s.changed = true
		}
		s.cache.SetPod(pod)
		s.queue.Drop(key)
		s.budget.Drop(key)
		return
	}
	if !scheduler.Pending(pod) {
		s.queue.Drop(key)
		return
	}
	s.waiting[key] = waitingPod{pod: pod, rev: rev}
	if !s.queue.Pending(key) {
		s.queue.Add(key)
	}
}

func (s *schedulerActor) armRetry(ctx actor.Context, at time.Time) {
	if s.retryTimer != nil && !at.Before(s.retryAt) {
		return
	}
	if s.retryTimer != nil {
		s.retryTimer.Stop()
	}
	self, root := ctx.Self(), s.env.root
	s.retryAt = at
	s.retryTimer = s.env.clock.AfterFunc(max(at.Sub(s.env.now()), 0), func() { root.Send(self, &schedRetry{}) })
}

func (s *schedulerActor) armExpire(ctx actor.Context) {
	self, root := ctx.Self(), s.env.root
	s.expireTimer = s.env.clock.AfterFunc(expireEvery, func() { root.Send(self, &schedExpire{}) })
}

// localDecisions is how many pods the scheduler decides in one turn when it bids
// itself. A round through a shard actor costs two turns of the Go scheduler, and at
// the envelope's size hundreds of other actors (replication controllers creating
// pods, pods' actors writing) are runnable too: each turn waited behind them, so
// binding went at the rate of turns, not of CPU. Deciding a run of pods per turn
// (each a few tens of microseconds) lets the rate follow the queue; the bound keeps
// the inputs that arrive meanwhile (bindings observed, pods deleted, nodes) waiting
// for one run at most.
const localDecisions = 64

// next starts a round for the first queued pod that is still pending; with the
// local shard it decides up to localDecisions of them, then asks for another turn.
func (s *schedulerActor) next(ctx actor.Context) {
	for n := 0; s.round == nil && s.ready(); n++ {
		if n == localDecisions {
			if !s.resumed {
				s.resumed = true
				ctx.Send(ctx.Self(), &schedNext{})
			}
			return
		}
		key, ok := s.queue.Pop()
		if !ok {
			return
		}
		if _, ok := s.binds[key]; ok {
			continue
		}
		pod, rev := s.current(key)
		if pod == nil {
			s.queue.Drop(key)
			continue
		}
		s.bid(ctx, key, pod, rev)
	}
}

// current returns the pod as the inputs last gave it (waitingPod) or else as stored
// now, or nil when it no longer waits for us.
func (s *schedulerActor) current(key string) (*corev1.Pod, int64) {
	if w, ok := s.waiting[key]; ok {
		return w.pod, w.rev
	}
	ns, name, _ := strings.Cut(key, "/")
	it, err := s.env.store.Get(podKey(ns, name))
	if err != nil {
		return nil, 0
	}
	pod, ok := it.Object().(*corev1.Pod)
	if !ok || !scheduler.Pending(pod) {
		return nil, 0
	}
	return pod, it.Revision
}

func (s *schedulerActor) bid(ctx actor.Context, key string, pod *corev1.Pod, rev int64) {
	if s.stale {
		if s.local != nil {
			s.local.SetNodes(s.cache.Shards(1)[0])
		} else {
			for i, nodes := range s.cache.Shards(len(s.shards)) {
				ctx.Send(s.shards[i], &shardNodes{nodes: nodes})
			}
		}
		s.stale = false
	}
	s.seq++
	s.began = time.Now()
	s.traceRound(key)
	pctx := s.cache.Context(pod, &s.cfg.policy)
	pctx.SetClaims(scheduler.ClaimsReason(pod, s.claim))
	if s.local != nil {
		r := scheduler.NewRound(s.seq, key, pod, rev, pctx, 1)
		s.round = r
		s.local.Touch(s.cache.Changes())
		d := s.local.Decide(pod, r.Ctx, scheduler.TieBreak(key, s.salt))
		s.bidIn(ctx, &bidReply{seq: r.Seq, shard: 0, decision: d})
		return
	}
	r := scheduler.NewRound(s.seq, key, pod, rev, pctx, len(s.shards))
	s.round = r
	changed := s.cache.Changes()
	for i, pid := range s.shards {
		ctx.Request(pid, &bidRequest{seq: r.Seq, shard: i, pod: pod, ctx: r.Ctx, changed: changed})
	}
}

// claim reads a stored claim, or nil (VolumeClaimsBound).
func (s *schedulerActor) claim(ns, name string) *corev1.PersistentVolumeClaim {
	it, err := s.env.store.Get(persistence.Key{Resource: "persistentvolumeclaims", Namespace: ns, Name: name})
	if err != nil {
		return nil
	}
	c, _ := it.Object().(*corev1.PersistentVolumeClaim)
	return c
}

// bidIn collects a shard's decision; with the last one the round ends and the
// messages deferred during it are handled.
func (s *schedulerActor) bidIn(ctx actor.Context, msg *bidReply) {
	r := s.round
	if r == nil {
		return
	}
	s.bidTimed(r, msg) // tracing.go
	if !r.Answer(msg.seq, msg.shard, msg.decision) {
		return
	}
	s.decide(ctx, r)
	s.env.stats.sched.attempt.ObserveSince(s.began)
	s.round = nil
	deferred := s.deferred
	s.deferred = nil
	for _, m := range deferred {
		s.handle(ctx, m)
	}
}

// decide merges the shards' decisions (in shard order, so a seed gives the same
// outcome), then binds the winner or records the failure.
func (s *schedulerActor) decide(ctx actor.Context, r *scheduler.Round) {
	d := r.Decision(scheduler.TieBreak(r.Key, uint64(s.cfg.seed)))
	if d.Node == "" {
		s.roundDone(d, "unschedulable")
		s.unschedulable(ctx, r.Key, r.Pod, d)
		return
	}
	winner := s.cfg.policy.Explain(r.Pod, s.cache.Node(d.Node), r.Ctx)
	now := s.env.now()
	next, err := podpkg.Bind(r.Pod, scheduler.NewBinding(r.Pod, d, winner.Scores), now)
	if err != nil { // cannot happen: the pod was read pending just now
		s.env.stats.sched.errors.Add(1)
		s.queue.Drop(r.Key)
		s.log.WithFields(logrus.Fields{"pod": r.Key, "error": err}).Warn("binding refused")
		return
	}
	if err := s.cache.Assume(r.Pod, d.Node, now); err != nil {
		s.env.stats.sched.errors.Add(1)
		s.log.WithFields(logrus.Fields{"pod": r.Key, "error": err}).Debug("not assumed")
		return
	}
	s.binds[r.Key] = &binding{pod: r.Pod, decision: d}
	delete(s.waiting, r.Key) // a refused binding reads the store again
	s.queue.Drop(r.Key)
	s.budget.Drop(r.Key) // why it waited no longer matters
	sc := s.roundDone(d, "bound")
	ctx.Request(s.env.managers["pods"], &updateRequest{envelope: envelope{key: podKey(r.Pod.Namespace, r.Pod.Name), span: sc, sent: time.Now()},
		write: write{sub: "binding"}, object: next, pre: command.Preconditions{UID: r.Pod.UID, ResourceVersion: r.Rev}})
}

// bound handles the answer to a binding. A refused binding (the pod changed, was
// bound by someone else, or is gone) drops the assumption and looks at the pod again.
func (s *schedulerActor) bound(ctx actor.Context, r *reply) {
	if r.key.Resource != "pods" {
		return
	}
	key := namespacedName(r.key)
	b, ok := s.binds[key]
	if !ok {
		return
	}
	delete(s.binds, key)
	if r.err != nil {
		s.env.stats.sched.errors.Add(1)
		s.cache.Forget(key)
		s.log.WithFields(logrus.Fields{"pod": key, "node": b.decision.Node, "error": r.err}).Debug("binding refused")
		s.queue.Add(key)
		return
	}
	s.env.stats.sched.scheduled.Add(1)
	if p, ok := r.object.(*corev1.Pod); ok {
		s.cache.SetPod(p) // the binding is observed
	}
	if s.cfg.scheduledEvents { // held under its own key: the pod's binding does not drop it
		s.offerEvent(ctx, scheduler.HeldEvent{Key: key + "\x00Scheduled", Pod: b.pod, Type: corev1.EventTypeNormal,
			Reason: "Scheduled", Message: scheduler.ScheduledMessage(b.decision), Droppable: true})
	}
}

// unschedulable backs the pod off and offers its FailedScheduling event to the
// budget: written now, or held (and counted) until a token comes.
func (s *schedulerActor) unschedulable(ctx actor.Context, key string, pod *corev1.Pod, d scheduler.Decision) {
	s.env.stats.sched.unschedulable.Add(1)
	now := s.env.now()
	retryAt, attempts := s.queue.Unschedulable(key, now)
	s.armRetry(ctx, retryAt)
	msg := scheduler.FailedSchedulingMessage(d)
	s.offerEvent(ctx, scheduler.HeldEvent{Key: key, Pod: pod, Type: corev1.EventTypeWarning, Reason: "FailedScheduling", Message: msg})
	s.log.WithFields(logrus.Fields{"pod": key, "attempts": attempts, "reasons": msg}).Debug("pod unschedulable")
}

// offerEvent writes an event occurrence now if the budget allows, or leaves it held
// and arms the flush.
func (s *schedulerActor) offerEvent(ctx actor.Context, e scheduler.HeldEvent) {
	now := s.env.now()
	h, ok := s.budget.Offer(e, now)
	s.env.stats.sched.eventsDropped.Store(s.budget.Dropped())
	if ok {
		s.writeEvent(ctx, h)
		return
	}
	s.armFlush(ctx, s.budget.NextFlush(now))
}

func (s *schedulerActor) writeEvent(ctx actor.Context, h scheduler.HeldEvent) {
	s.env.recordEvents(ctx, &s.events, "", h.Pod, schedulerComponent, h.Type, h.Reason, h.Message, h.At, h.Count)
}

// flushEvents writes the held event occurrences the budget allows now.
func (s *schedulerActor) flushEvents(ctx actor.Context) {
	out, next := s.budget.Flush(s.env.now())
	for _, h := range out {
		s.writeEvent(ctx, h)
	}
	if !next.IsZero() {
		s.armFlush(ctx, next)
	}
}

func (s *schedulerActor) armFlush(ctx actor.Context, at time.Time) {
	if at.IsZero() || s.flushTimer != nil && !at.Before(s.flushAt) {
		return
	}
	if s.flushTimer != nil {
		s.flushTimer.Stop()
	}
	self, root := ctx.Self(), s.env.root
	s.flushAt = at
	s.flushTimer = s.env.clock.AfterFunc(max(at.Sub(s.env.now()), time.Millisecond), func() { root.Send(self, &schedFlush{}) })
}

// shardActor decides pods over its shard of the nodes. It owns the shard's cached
// bids per pod class (scheduler.Shard), so it re-bids only the nodes that changed.
type shardActor struct {
	shard *scheduler.Shard
	salt  uint64 // of the tie-breaks: one per shard
	stats *kindStats
}

func (a *shardActor) Receive(ctx actor.Context) {
	defer a.stats.handled(time.Now())
	switch msg := ctx.Message().(type) {
	case *shardNodes:
		a.shard.SetNodes(msg.nodes)
	case *bidRequest:
		a.shard.Touch(msg.changed)
		tieBreak := scheduler.TieBreak(scheduler.PodKey(msg.pod), a.salt)
		ctx.Respond(&bidReply{seq: msg.seq, shard: msg.shard, decision: a.shard.Decide(msg.pod, msg.ctx, tieBreak)})
	}
}

// schedulerName is the scheduler's actor name (a singleton: cluster.go).
const schedulerName = "scheduler"

// spawnScheduler starts the scheduler under the root supervisor, named id, when it
// is configured and the system has the pods and nodes it needs.
func spawnScheduler(ctx actor.Context, e *env, id string) *actor.PID {
	if e.sched == nil || e.managers["pods"] == nil || e.managers["nodes"] == nil {
		return nil
	}
	pid, err := ctx.SpawnNamed(schedulerProps(e), id)
	if err != nil {
		panic(err) // cannot happen: the supervisor names each start anew
	}
	return pid
}
