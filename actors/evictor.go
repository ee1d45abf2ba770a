package actors

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/persistence"
)

// evictTick makes the evictor look at its bucket again.
type evictTick struct{}

// evictorState is what the evictor keeps across restarts.
type evictorState struct {
	ev    *node.Evictor
	timer Timer
}

// evictor is the actor of the one node.Evictor: node actors send it eviction
// requests, it deletes the pods of one node per token, in the order the requests came.
// It runs where the node controller runs (cluster.go: singletonRoles); a new one
// starts empty and learns of the due evictions from the node actors' next syncs.
type evictor struct {
	env *env
	st  *evictorState
}

// spawnEvictor starts the evictor under the name id (the supervisor passes it the
// node actors' requests: effects.Tell), when pods are served.
func spawnEvictor(ctx actor.Context, e *env, id string) *actor.PID {
	if _, ok := e.managers["pods"]; !ok {
		return nil
	}
	st := &evictorState{ev: node.NewEvictor(e.nodes.DeletingPodsQPS, e.nodes.DeletingPodsBurst, e.now())}
	props := actor.PropsFromProducer(func() actor.Actor { return &evictor{env: e, st: st} },
		actor.WithSupervisor(restartStrategy(e.log.WithField("actor", node.EvictorName))), actor.WithDispatcher(e.workers),
		actor.WithReceiverMiddleware(e.receiveWire)) // its deletes' answers may come from another member
	pid, err := ctx.SpawnNamed(props, id)
	if err != nil {
		panic(err) // cannot happen: the supervisor names each start anew
	}
	return pid
}

// Receive queues requests and spends tokens on them.
func (v *evictor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *node.EvictRequest:
		v.st.ev.Request(msg.Eviction)
		v.drain(ctx)
	case *node.EvictCancel:
		v.st.ev.Cancel(msg.Node)
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
	due, next := v.st.ev.Drain(now)
	for _, req := range due {
		v.env.log.WithFields(logrus.Fields{"trace": req.Trace, "node": req.Node, "pods": len(req.Pods)}).Info("evicting pods")
		for _, p := range req.Pods {
			ctx.Request(v.env.managers["pods"], &deleteRequest{envelope: envelope{trace: req.Trace, key: podKey(p.Namespace, p.Name)}})
		}
	}
	if v.st.timer != nil {
		v.st.timer.Stop()
		v.st.timer = nil
	}
	if next.IsZero() {
		return // nothing waits, or the bucket never refills
	}
	self, root := ctx.Self(), v.env.root
	v.st.timer = v.env.clock.AfterFunc(max(next.Sub(now), 0), func() { root.Send(self, &evictTick{}) })
}
