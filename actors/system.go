package actors

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/persistentvolume"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// rootName is the id of the root supervisor; managers are "kubeactor/<resource>".
const rootName = "kubeactor"

// DefaultResources are the resources given actors when Options.Resources is empty:
// every stored kind of the table.
var DefaultResources = kinds.Stored()

// env is what every actor of one system shares; it is immutable once Start returns
// (managers is filled before any actor starts).
type env struct {
	store     *persistence.Store
	log       logrus.FieldLogger
	debug     bool
	now       func() time.Time // clock.Now
	clock     Clock
	root      *actor.RootContext
	managers  map[string]*actor.PID
	resources []string
	workers   *workerPool // the dispatcher of every actor
	nodes     NodeOptions
	services  ServiceOptions
	// supervisor is the root actor's PID: controllers Tell the singletons (the
	// evictor) through it (effects.Tell), wherever the singleton runs now.
	supervisor *actor.PID
	eventTTL   time.Duration
	// syncPacing is Options.SyncPacing: a feed-triggered sync waits this many times
	// the last sync's cost (0: no pacing).
	syncPacing int
	// idleAfter is Options.IdleAfter with its default (0: never): how long the actor
	// of an on-demand kind's object lives without a request.
	idleAfter time.Duration
	sched     *schedulerConfig // nil: no scheduler (scheduling.go)
	admission admission.Chain  // Options.Admission (admit.go)
	// requestTimeout bounds a quota charge's wait (quotas.go); quotaSyncPeriod is
	// Options.ResourceQuotaSyncPeriod.
	requestTimeout  time.Duration
	quotaSyncPeriod time.Duration
	podGCThreshold  int // Options.TerminatedPodGCThreshold (podgc.go)
	// pvRecycler makes the pods that reclaim released persistent volumes
	// (Options.PVRecyclerImage).
	pvRecycler persistentvolume.RecyclerOptions
	stats      *stats          // stats.go
	tracer     *tracing.Tracer // Options.Tracer (tracing.go); nil: none
	// serviceAccounts is Options.ServiceAccounts (nil: no service-account controllers).
	serviceAccounts *serviceaccount.Options
	// cluster is this member's place in a replicated control plane (cluster.go);
	// nil: a system of one, which runs everything.
	cluster *cluster
	// alive records which movable singletons (podgc, scheduler, evictor) run here
	// now (name -> bool), as the supervisor started or stopped them.
	alive sync.Map
}

// singletonAlive tells whether the supervisor runs the singleton name now.
func (e *env) singletonAlive(name string) bool {
	v, ok := e.alive.Load(name)
	return ok && v.(bool)
}

// keys lists the keys of every stored object of one resource.
func (e *env) keys(resource string) []persistence.Key {
	var keys []persistence.Key
	e.store.Snapshot(resource).Ascend("", "", func(it *persistence.Item) bool {
		keys = append(keys, it.Key)
		return true
	})
	return keys
}

// contents lists the keys of every namespaced object stored in namespace ns.
func (e *env) contents(ns string) []persistence.Key {
	var keys []persistence.Key
	for _, r := range e.resources {
		if r == "namespaces" {
			continue
		}
		e.store.Snapshot(r).Ascend(ns, "", func(it *persistence.Item) bool {
			keys = append(keys, it.Key)
			return true
		})
	}
	return keys
}

// supervisor is the root actor: it spawns one manager per resource and restarts a
// manager that panics (which then reloads its objects from the store). It starts or
// stops the singletons (the scheduler, the pod GC, the evictor) as the cluster's
// view changes (cluster.go), and passes them the messages controllers Tell them
// (from this member or, over the wire, from another).
type supervisor struct {
	env     *env
	running map[string]*actor.PID // the movable singletons running here
	gen     int                   // names each start of a singleton anew
}

// movable are the singletons that move to a member of their role (cluster.go).
var movable = []struct {
	name  string
	spawn func(actor.Context, *env, string) *actor.PID
}{{podGCName, spawnPodGC}, {schedulerName, spawnScheduler}, {node.EvictorName, spawnEvictor}}

// follow starts the movable singletons this member should run and stops the others.
func (s *supervisor) follow(ctx actor.Context) {
	if s.running == nil {
		s.running = map[string]*actor.PID{}
	}
	for _, m := range movable {
		pid, up := s.running[m.name]
		want := s.env.runs(m.name)
		switch {
		case want && !up:
			id := m.name
			if s.gen++; s.gen > 1 {
				id += "-" + strconv.Itoa(s.gen)
			}
			if pid = m.spawn(ctx, s.env, id); pid == nil {
				continue // not configured here
			}
			s.running[m.name] = pid
			if s.env.cluster != nil {
				s.env.log.WithFields(logrus.Fields{"actor": m.name, "member": s.env.cluster.self}).Info("singleton started on this member")
			}
		case !want && up:
			ctx.Stop(pid)
			delete(s.running, m.name)
			s.env.log.WithFields(logrus.Fields{"actor": m.name, "member": s.env.cluster.self}).Info("singleton stopped on this member: another runs it")
		}
		_, now := s.running[m.name]
		s.env.alive.Store(m.name, now)
	}
}

// Receive spawns the managers at start.
func (s *supervisor) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		for _, r := range s.env.resources {
			props := actor.PropsFromProducer(func() actor.Actor { return newManager(s.env, r) },
				actor.WithSupervisor(restartStrategy(s.env.log.WithField("kind", r))), actor.WithDispatcher(s.env.workers),
				actor.WithReceiverMiddleware(s.env.receiveWire),
				s.env.stats.managers[r].mailbox())
			if _, err := ctx.SpawnNamed(props, r); err != nil {
				panic(err) // cannot happen: names are unique and the system is fresh
			}
		}
		s.follow(ctx)
	case *placementChanged:
		s.follow(ctx)
	case *node.EvictRequest, *node.EvictCancel:
		s.pass(ctx, node.EvictorName)
	case *ping:
		ctx.Respond(&pong{})
	}
}

// pass forwards the message to the singleton name when it runs here. Otherwise it
// moved meanwhile: the message is dropped, and its sender sends it again at its
// next sync (a node actor asks for its eviction at every sync while it is due).
func (s *supervisor) pass(ctx actor.Context, name string) {
	if pid, ok := s.running[name]; ok {
		ctx.Forward(pid)
		return
	}
	s.env.log.WithFields(logrus.Fields{"actor": name, "message": fmt.Sprintf("%T", ctx.Message())}).
		Debug("message to a singleton that does not run here: dropped")
}

// restartStrategy restarts a failed child, unless it failed 10 times within a second
// (then the child is stopped).
func restartStrategy(log logrus.FieldLogger) actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(10, time.Second, func(reason any) actor.Directive {
		log.WithField("reason", fmt.Sprint(reason)).Error("actor failed")
		return actor.RestartDirective
	})
}

// wait returns once pid has started (and so, for a manager, loaded its objects).
func wait(root *actor.RootContext, pid *actor.PID, timeout time.Duration) error {
	_, err := root.RequestFuture(pid, &ping{}, timeout).Result()
	return err
}

// debugEnabled tells whether log writes debug entries, so that the write path skips
// building fields otherwise.
func debugEnabled(log logrus.FieldLogger) bool {
	switch l := log.(type) {
	case *logrus.Logger:
		return l.IsLevelEnabled(logrus.DebugLevel)
	case *logrus.Entry:
		return l.Logger.IsLevelEnabled(logrus.DebugLevel)
	default:
		return true
	}
}

// slogBridge passes protoactor's warnings and errors to logrus and drops the rest.
type slogBridge struct {
	log   logrus.FieldLogger
	attrs []slog.Attr
}

func (h slogBridge) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h slogBridge) Handle(_ context.Context, r slog.Record) error {
	fields := logrus.Fields{"lib": "protoactor"}
	for _, a := range h.attrs {
		fields[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		fields[a.Key] = a.Value.String()
		return true
	})
	if r.Level >= slog.LevelError {
		h.log.WithFields(fields).Error(r.Message)
	} else {
		h.log.WithFields(fields).Warn(r.Message)
	}
	return nil
}

func (h slogBridge) WithAttrs(as []slog.Attr) slog.Handler {
	return slogBridge{log: h.log, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h slogBridge) WithGroup(string) slog.Handler { return h }
