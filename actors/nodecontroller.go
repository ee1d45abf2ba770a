package actors

import (
	"errors"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// The node controller: each node's own actor watches its heartbeats (the agent's
// status updates are updates of the node, so the actor sees every one), marks the
// node's Ready condition Unknown when they stop, labels it with its hostname, and
// asks for its pods to be evicted once it has been NotReady or Unknown for the
// eviction timeout. Evictions are rate limited across all nodes by one token bucket,
// whose one owner is the evictor actor: node actors send it eviction requests, it
// deletes the pods of one node per token, in the order the requests came.

// evictorName is the evictor's id under the root supervisor.
const evictorName = "evictor"

// nodeState is what a node's actor keeps across restarts.
type nodeState struct {
	obs     node.Observed
	queued  bool  // an eviction request is waiting at the evictor
	decided int64 // the node's revision last decided on
	// cidrAsked is the node's revision at which it last asked the nodes manager for a
	// pod CIDR (an update through the manager, which fills one in).
	cidrAsked int64
}

func nodeStateOf(a *objectActor) *nodeState { return ctrlState[nodeState](a) }

// settleNode decides again whenever the node changed (a heartbeat, a cordon).
func settleNode(a *objectActor, ctx actorContext) {
	if nodeStateOf(a).decided != a.rev {
		a.queueSync(ctx)
	}
}

// syncNode is the node's controller: decide, write the node, ask for evictions.
func syncNode(a *objectActor, ctx actorContext) {
	n, ok := a.obj.(*corev1.Node)
	if !ok {
		return
	}
	cfg := a.env.nodes
	now := a.env.now()
	st := nodeStateOf(a)
	// The evictor owns the real bucket: decide as if tokens were plenty, and let it
	// pace the evictions asked for.
	plenty := node.NewLimiter(0, 1, now)
	plan := node.Decide(n, nil, st.obs, plenty, cfg.Config, now)
	if plan.Observed.Status != corev1.ConditionTrue { // only then can pods be evicted
		plan = node.Decide(n, a.env.podsOnNode(n.Name), st.obs, plenty, cfg.Config, now)
	}
	st.obs = plan.Observed
	if plan.Event != "" {
		a.fields(a.cell.trace).WithField("event", plan.Event).Info("node not ready")
	}
	if plan.Status != nil || plan.LabelPatch != nil {
		next := n.DeepCopy()
		if plan.Status != nil {
			next.Status = *plan.Status
		}
		if plan.LabelPatch != nil {
			if next.Labels == nil {
				next.Labels = map[string]string{}
			}
			next.Labels[node.HostnameLabel] = n.Name
		}
		a.writeSelf(next)
	}
	st.decided = a.rev
	if a.env.nodes.PodCIDRs.Allocate && n.Spec.PodCIDR == "" && st.cidrAsked != a.rev {
		// Stored without one (before allocation was on, or while the range was full).
		st.cidrAsked = a.rev
		cur, _ := a.obj.(*corev1.Node)
		ctx.Request(a.env.managers["nodes"], &updateRequest{envelope: envelope{trace: a.cell.trace, key: a.cell.key},
			object: cur.DeepCopy(), pre: command.Preconditions{UID: cur.UID, ResourceVersion: a.rev}})
	}

	switch {
	case len(plan.EvictPods) > 0: // (again: the evictor may have served the last one)
		ctx.Send(a.env.evictor, &evictRequest{node: n.Name, trace: a.cell.trace, pods: plan.EvictPods})
		st.queued = true
	case st.queued:
		ctx.Send(a.env.evictor, &evictCancel{node: n.Name})
		st.queued = false
	}

	next := now.Add(cfg.MonitorPeriod)
	if !plan.NextCheck.IsZero() && plan.NextCheck.Before(next) {
		next = plan.NextCheck
	}
	a.syncAt(ctx, next)
}

// nodeDeleted withdraws the node's eviction request.
func nodeDeleted(a *objectActor, ctx actorContext, _ runtime.Object) {
	if st := nodeStateOf(a); st.queued {
		ctx.Send(a.env.evictor, &evictCancel{node: a.cell.key.Name})
		st.queued = false
	}
}

// podsOnNode returns the pods bound to the node named name.
func (e *env) podsOnNode(name string) []*corev1.Pod {
	var out []*corev1.Pod
	e.store.Snapshot("pods").Ascend("", "", func(it *persistence.Item) bool {
		if p, ok := it.Object.(*corev1.Pod); ok && p.Spec.NodeName == name {
			out = append(out, p)
		}
		return true
	})
	return out
}

// evictRequest asks the evictor to delete the pods of a node when a token allows;
// a newer request for the same node replaces the older, keeping its place.
type evictRequest struct {
	node  string
	trace string
	pods  []types.NamespacedName
}

// evictCancel withdraws a node's eviction request (the node is Ready again or gone).
type evictCancel struct{ node string }

// evictTick makes the evictor look at its bucket again.
type evictTick struct{}

// evictorState is what the evictor keeps across restarts.
type evictorState struct {
	lim     node.Limiter
	queue   []string // nodes, in the order they asked
	waiting map[string]*evictRequest
	timer   *time.Timer
}

// evictor owns the eviction token bucket shared by every node.
type evictor struct {
	env *env
	st  *evictorState
}

func spawnEvictor(ctx actor.Context, e *env) {
	if _, ok := e.managers["pods"]; !ok {
		return
	}
	st := &evictorState{lim: node.NewLimiter(e.nodes.DeletingPodsQPS, e.nodes.DeletingPodsBurst, e.now()),
		waiting: map[string]*evictRequest{}}
	props := actor.PropsFromProducer(func() actor.Actor { return &evictor{env: e, st: st} },
		actor.WithSupervisor(restartStrategy(e.log.WithField("actor", evictorName))), actor.WithDispatcher(e.workers))
	if _, err := ctx.SpawnNamed(props, evictorName); err != nil {
		panic(err) // cannot happen: the name is unique and the system is fresh
	}
}

// Receive queues requests and spends tokens on them.
func (v *evictor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *evictRequest:
		if _, ok := v.st.waiting[msg.node]; !ok {
			v.st.queue = append(v.st.queue, msg.node)
		}
		v.st.waiting[msg.node] = msg
		v.drain(ctx)
	case *evictCancel:
		delete(v.st.waiting, msg.node)
		v.st.queue = slices.DeleteFunc(v.st.queue, func(n string) bool { return n == msg.node })
	case *evictTick:
		v.drain(ctx)
	case *reply:
		if msg.err != nil && !errors.Is(msg.err, persistence.ErrNotFound) {
			v.env.log.WithFields(logrus.Fields{"pod": msg.key.Namespace + "/" + msg.key.Name, "error": msg.err}).
				Warn("evict pod")
		}
	case *actor.Stopping:
		if v.st.timer != nil {
			v.st.timer.Stop()
		}
	}
}

// drain evicts the waiting nodes' pods while tokens last, then waits for the next.
func (v *evictor) drain(ctx actor.Context) {
	now := v.env.now()
	for len(v.st.queue) > 0 {
		lim, ok := v.st.lim.Take(now)
		v.st.lim = lim
		if !ok {
			break
		}
		name := v.st.queue[0]
		v.st.queue = v.st.queue[1:]
		req := v.st.waiting[name]
		delete(v.st.waiting, name)
		v.env.log.WithFields(logrus.Fields{"trace": req.trace, "node": name, "pods": len(req.pods)}).Info("evicting pods")
		for _, p := range req.pods {
			ctx.Request(v.env.managers["pods"], &deleteRequest{envelope: envelope{trace: req.trace, key: podKey(p.Namespace, p.Name)}})
		}
	}
	if v.st.timer != nil {
		v.st.timer.Stop()
		v.st.timer = nil
	}
	if len(v.st.queue) == 0 {
		return
	}
	wait := v.env.nodes.MonitorPeriod // a clock that jumps is noticed within it
	if at := v.st.lim.Available(now); !at.IsZero() {
		wait = min(wait, max(at.Sub(now), 0))
	}
	self, root := ctx.Self(), v.env.root
	v.st.timer = time.AfterFunc(wait, func() { root.Send(self, &evictTick{}) })
}
