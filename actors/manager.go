package actors

import (
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/actors/control"
	"github.com/kubeactor/kubeactor/persistence"
)

// A manager owns the actors of one kind. It never blocks and never writes: it only
// routes requests (a map lookup and a Forward, which keeps the caller as sender so the
// object's actor answers it directly) and spawns and stops object actors. The object
// actors persist concurrently, so the store can batch their fsyncs.
//
// Lifecycle protocol (no request is lost or handled by two actors):
//
//   - The manager counts, per live child, the requests it has routed to it (routed);
//     the child counts the requests it has handled (handled, kept across restarts).
//   - When a child is left without an object (deleted, a failed create, a miss), it
//     reports childIdle{handled} after finishing the request.
//   - The manager stops the child and forgets it only if that report is from the child
//     it still maps and routed == handled: nothing is in flight to it, and since it
//     only writes while handling a request, it will never write again. Otherwise the
//     report is stale and ignored: the child will handle the newer requests (a create
//     that raced with the delete finds no object and creates it) and report again.
//   - A request for an unmapped name spawns a new child under a fresh actor name (a
//     generation number), so a stopping predecessor never clashes with it; the child
//     loads its object from the store (or, for a create, knows it is absent).
//   - A child that dies unexpectedly (its supervisor gave up) is forgotten; the next
//     request spawns a new one that reloads from the store.
//   - An on-demand kind's manager sweeps its children every idleAfter: a child
//     routed nothing since the last sweep is asked (idleCheck) whether it could stop,
//     and one that needs no actor (no deadline, no timer, no answer awaited) reports
//     childIdle{handled} as a child without an object does, with the same outcome.
//     The next request spawns a new one, as after a restart.
type manager struct {
	env      *env
	resource string
	newCtrl  func() control.Controller
	onDemand bool // objects get an actor only when they need one (controllers.go)
	children map[objKey]*childRef
	byID     map[string]objKey // child PID id -> key, to recognise Terminated
	gen      uint64
	stopping bool       // children are being stopped with the manager: not unexpected
	ext      managerExt // the kind's own part, or nil (see managerext.go)
	sweep    Timer      // the next idle sweep (on-demand kinds), or nil
	stats    *kindStats // the manager's own (stats.go)
	objStats *kindStats // its object actors'
}

// extIfHosted is the kind's manager extension where the manager keeps actors: a
// member that forwards the kind to the leader allocates nothing.
func extIfHosted(e *env, resource string) managerExt {
	if !e.hosts(resource) {
		return nil
	}
	return newManagerExt(e, resource)
}

// objKey names an object within its kind.
type objKey struct{ namespace, name string }

type childRef struct {
	pid    *actor.PID
	routed uint64
	swept  uint64 // routed at the last idle sweep
}

func newManager(e *env, resource string) *manager {
	return &manager{
		env:      e,
		resource: resource,
		newCtrl:  e.controllerFor(resource),
		onDemand: onDemand(resource),
		children: make(map[objKey]*childRef),
		byID:     make(map[string]objKey),
		ext:      extIfHosted(e, resource),
		stats:    e.stats.managers[resource],
		objStats: e.stats.objects[resource],
	}
}

// Receive routes requests and keeps the children map.
func (m *manager) Receive(ctx actor.Context) {
	defer m.stats.handled(time.Now())
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.load(ctx)
		m.armSweep(ctx)
	case *idleSweep:
		m.sweepIdle(ctx)
		m.armSweep(ctx)
	case routed:
		m.route(ctx, msg)
	case *childIdle:
		if m.ext != nil {
			m.ext.receive(m, ctx, msg)
		}
		if c, ok := m.children[msg.key]; ok && c.pid.Equal(msg.pid) && c.routed == msg.handled {
			m.forget(msg.key, c)
			ctx.Stop(c.pid)
		}
	case *actor.Restarting:
		m.stopping = true
		m.stats.restarted()
		m.stopSweep()
	case *actor.Stopping:
		m.stopping = true
		m.stopSweep()
	case *actor.Terminated:
		if k, ok := m.byID[msg.Who.Id]; ok && !m.stopping {
			m.env.log.WithFields(logrus.Fields{"kind": m.resource, "namespace": k.namespace, "name": k.name}).
				Warn("object actor stopped unexpectedly")
			m.forget(k, m.children[k])
		}
	case *ping:
		ctx.Respond(&pong{})
	case *placementChanged:
		m.replace(ctx)
	case *childrenRequest:
		keys := make([]objKey, 0, len(m.children))
		for k := range m.children {
			keys = append(keys, k)
		}
		ctx.Respond(&childrenReply{keys: keys})
	default:
		if m.ext != nil {
			m.ext.receive(m, ctx, msg)
		}
	}
}

// load spawns an actor for every stored object of the kind that this member hosts,
// or, for a kind whose objects get one on demand, for those that need one now
// (needsActor).
func (m *manager) load(ctx actor.Context) {
	if !m.env.hosts(m.resource) {
		return
	}
	started := 0
	m.env.store.Snapshot(m.resource).Ascend("", "", func(it *persistence.Item) bool {
		if _, local := m.env.where(it.Key); local && (!m.onDemand || needsActor(it.Peek())) {
			if m.spawn(ctx, it.Key, &cell{key: it.Key, initial: it, ctrl: m.newCtrl()}) != nil {
				started++
			}
		}
		return true
	})
	if m.ext != nil {
		m.ext.load(m)
	}
	m.logPlaced(started, 0)
}

// logPlaced says, in a cluster, how many object actors this manager started and
// stopped as the members changed (or at start), and how many it hosts now.
func (m *manager) logPlaced(started, stopped int) {
	if m.env.cluster == nil || started == 0 && stopped == 0 {
		return
	}
	m.env.log.WithFields(logrus.Fields{"kind": m.resource, "member": m.env.cluster.self, "started": started,
		"stopped": stopped, "hosted": len(m.children)}).Info("object actors placed")
}

func (m *manager) route(ctx actor.Context, msg routed) {
	key := msg.target()
	if addr, local := m.env.where(key); !local {
		m.forward(ctx, msg, addr)
		return
	}
	k := objKey{key.Namespace, key.Name}
	c, ok := m.children[k]
	if _, resync := msg.(*resyncRequest); resync && !ok {
		// Nothing to look again at: every stored object of an eager kind has an
		// actor, and an on-demand kind's controller does nothing on its own.
		return
	}
	if m.ext != nil && !isDryRun(msg) {
		seq := uint64(1)
		if ok {
			seq = c.routed + 1
		}
		if err := m.ext.admit(m, k, msg, seq); err != nil {
			ctx.Respond(&reply{key: key, err: err})
			return
		}
	}
	if !ok {
		// An unmapped object of an on-demand kind may be stored: its actor reads
		// the store rather than taking a create's word that it is absent.
		_, create := msg.(*createRequest)
		c = m.spawn(ctx, key, &cell{key: key, absent: create && !m.onDemand, ctrl: m.newCtrl()})
		if c == nil {
			if m.ext != nil {
				m.ext.forget(m, k)
			}
			ctx.Respond(&reply{err: errSpawn})
			return
		}
	}
	c.routed++
	ctx.Forward(c.pid)
}

// forward passes a request for an object hosted by another member to that member's
// manager of the kind (cluster.go), keeping the sender so the object's actor answers
// it directly. Resyncs are not passed on: the other member's own feed saw the change.
func (m *manager) forward(ctx actor.Context, msg routed, addr string) {
	if _, resync := msg.(*resyncRequest); resync {
		return
	}
	if addr == "" || msg.hop() > maxHops {
		if ctx.Sender() != nil {
			ctx.Respond(&reply{key: msg.target(), err: errUnavailable})
		}
		return
	}
	ctx.Forward(actor.NewPID(addr, rootName+"/"+m.resource))
}

// replace follows a change of the members: it stops the actors of objects now
// hosted elsewhere and starts those of stored objects now hosted here.
func (m *manager) replace(ctx actor.Context) {
	started, stopped := 0, 0
	for k, c := range m.children {
		key := persistence.Key{Resource: m.resource, Namespace: k.namespace, Name: k.name}
		if _, local := m.env.where(key); !local {
			m.forget(k, c)
			ctx.Stop(c.pid)
			stopped++
			continue
		}
		ctx.Send(c.pid, &membersChanged{})
	}
	m.env.store.Snapshot(m.resource).Ascend("", "", func(it *persistence.Item) bool {
		if _, ok := m.children[objKey{it.Key.Namespace, it.Key.Name}]; !ok {
			if _, local := m.env.where(it.Key); local && m.spawn(ctx, it.Key, &cell{key: it.Key, initial: it, ctrl: m.newCtrl()}) != nil {
				started++
			}
		}
		return true
	})
	m.logPlaced(started, stopped)
}

func (m *manager) spawn(ctx actor.Context, key persistence.Key, c *cell) *childRef {
	m.gen++
	c.stats = m.objStats
	props := actor.PropsFromProducer(func() actor.Actor {
		return &objectActor{env: m.env, cell: c}
	}, actor.WithDispatcher(m.env.workers), m.objStats.mailbox(), actor.WithReceiverMiddleware(m.env.receiveWire))
	id := key.Namespace + "/" + key.Name + "#" + strconv.FormatUint(m.gen, 10)
	pid, err := ctx.SpawnNamed(props, id)
	if err != nil {
		m.env.log.WithFields(logrus.Fields{"kind": m.resource, "namespace": key.Namespace, "name": key.Name, "error": err}).
			Error("spawn object actor")
		return nil
	}
	ref := &childRef{pid: pid}
	k := objKey{key.Namespace, key.Name}
	m.children[k] = ref
	m.objStats.live.Store(int64(len(m.children)))
	m.byID[pid.Id] = k
	return ref
}

func (m *manager) forget(k objKey, c *childRef) {
	delete(m.children, k)
	m.objStats.live.Store(int64(len(m.children)))
	if c != nil {
		delete(m.byID, c.pid.Id)
	}
	if m.ext != nil {
		m.ext.forget(m, k)
	}
}

// armSweep schedules the next idle sweep of an on-demand kind's children.
func (m *manager) armSweep(ctx actor.Context) {
	if !m.onDemand || m.env.idleAfter <= 0 {
		return
	}
	self, root := ctx.Self(), m.env.root
	m.sweep = m.env.clock.AfterFunc(m.env.idleAfter, func() { root.Send(self, &idleSweep{}) })
}

func (m *manager) stopSweep() {
	if m.sweep != nil {
		m.sweep.Stop()
		m.sweep = nil
	}
}

// sweepIdle asks every child routed nothing since the last sweep whether it could
// stop (idleCheck): one that can answers childIdle, and Receive stops it if nothing
// was routed to it meanwhile.
func (m *manager) sweepIdle(ctx actor.Context) {
	for _, c := range m.children {
		if c.routed == c.swept {
			ctx.Send(c.pid, &idleCheck{})
		}
		c.swept = c.routed
	}
	releaseStopped(ctx)
}

// releaseStopped clears the references protoactor keeps to stopped children. Its
// set of a context's children removes a child by moving the last one into its slot
// and shortening the slice, so the array past the end still points at the PIDs of
// children that stopped, and each such PID caches its process: the child's mailbox,
// context and actor, with the object it held. After a build of 150,000 pods whose
// actors stopped when idle, that pinned over 300 MB (the pods' actors and their
// decoded objects) until as many actors were spawned again. Children returns that
// very slice; the manager's own goroutine runs this, as it runs every change of the
// set.
func releaseStopped(ctx actor.Context) {
	live := ctx.Children()
	clear(live[len(live):cap(live)])
}
