package actors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/persistentvolume"
	"github.com/kubeactor/kubeactor/actors/resourcequota"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
	"github.com/kubeactor/kubeactor/tracing"
)

// Errors of the actor system; persistence errors (ErrNotFound, ErrAlreadyExists,
// ErrConflict) are passed through wrapped.
var (
	// ErrTimeout: the object's actor did not answer within Options.RequestTimeout (or
	// the caller's deadline). The write may still happen.
	ErrTimeout = errors.New("actors: timeout")
	// ErrUnknownResource: no manager for the key's resource (see Options.Resources).
	ErrUnknownResource = errors.New("actors: unknown resource")
	errSpawn           = errors.New("actors: cannot spawn object actor")
)

// Options configure the actor system.
type Options struct {
	Store          *persistence.Store
	Log            logrus.FieldLogger
	RequestTimeout time.Duration // how long a caller waits for an actor's reply; 0 means 30s
	Clock          Clock         // nil means RealClock
	// Resources are the plural resource names given a manager (and whose stored
	// objects get actors at Start); empty means DefaultResources.
	Resources []string
	Nodes     NodeOptions    // the node controller; zero fields take the defaults
	Services  ServiceOptions // service address ranges; zero fields take the defaults
	// EventTTL is how long an event is kept after it was last seen; 0 means
	// DefaultEventTTL.
	EventTTL time.Duration
	// Scheduler runs the default scheduler (scheduling.go); the server turns it on.
	Scheduler       bool
	SchedulerShards int    // shard actors bidding in parallel; 0 means 1
	SchedulerPolicy []byte // a --policy-config-file; nil means the default policy
	SchedulerSeed   int64  // salts the tie breaks, drawn from a hash of the pod's name (0 is a salt too)
	// SchedulerQuiet writes no Scheduled event for the pods the scheduler binds
	// (benchmarks of the scheduler alone). By default every bound pod gets one
	// (kube-scheduler's "Successfully assigned <pod> to <node>"), through the
	// scheduler's event budget.
	SchedulerQuiet bool
	// SyncPacing makes a controller's feed-triggered sync wait this many times the
	// cost of its last sync (when that was 1 ms or more): 0 means DefaultSyncPacing,
	// a negative value turns pacing off (tests that drive syncs by hand).
	SyncPacing int
	// Admission is the chain every create, update and delete request passes in its
	// object's actor (admit.go); nil admits everything. The server's is
	// DefaultAdmission. The Quotas of its ResourceQuota plugins are bound to the
	// started system (quotas.go).
	Admission admission.Chain
	// ResourceQuotaSyncPeriod is how often each quota recounts its usage without any
	// event (--resource-quota-sync-period); 0 means resourcequota.DefaultSyncPeriod.
	ResourceQuotaSyncPeriod time.Duration
	// TerminatedPodGCThreshold is how many terminated pods may exist before the
	// oldest are deleted (--terminated-pod-gc-threshold, podgc.go); 0 or less
	// collects none (the server passes the flag, 12500 by default).
	TerminatedPodGCThreshold int
	// PVRecyclerImage is the image of the pods that scrub a released Recycle volume
	// or delete a released Delete hostPath volume's directory: the agents' infra
	// image, whose /pause has the scrub and delete modes (--pv-recycler-image);
	// "" means persistentvolume.DefaultRecyclerImage.
	PVRecyclerImage string
	// ServiceAccounts, when set, runs the service-account controllers: a "default"
	// account in every active namespace and, with a token generator, a token secret
	// per account. Nil runs neither (tests of other kinds).
	ServiceAccounts *serviceaccount.Options
	// Tracer traces requests, syncs and scheduling rounds (tracing.go); nil traces nothing.
	Tracer *tracing.Tracer
	// Cluster makes the system one member of a replicated control plane
	// (cluster.go); nil: a system of one.
	Cluster *ClusterOptions
	// IdleAfter stops the actor of an object of an on-demand kind (controllers.go)
	// once no request came to it for this long (between once and twice this), as a
	// restart would not have spawned it: 0 means DefaultIdleAfter, a negative value
	// never stops one.
	IdleAfter time.Duration
}

// DefaultSyncPacing is Options.SyncPacing's default.
const DefaultSyncPacing = 8

// DefaultIdleAfter is Options.IdleAfter's default. An actor's object is decoded and
// pointer-rich: at 150,000 pods, the actors of the pods written in the last one to
// two minutes (a minute's default) held several hundred MB that every collection
// scans, and most pods see nothing after their status is Running. A pod whose actor
// stopped is loaded again from the store by its next request's new actor.
const DefaultIdleAfter = 15 * time.Second

// DeleteOptions mirror metav1.DeleteOptions as the actors need them.
type DeleteOptions struct {
	GracePeriodSeconds *int64
	Preconditions      command.Preconditions
	PropagationPolicy  string // Orphan, Background or Foreground; empty means the kind's default
}

// System is the running actor system.
type System struct {
	remote   *remote.Remote // the actor transport of a cluster member, or nil
	system   *actor.ActorSystem
	root     *actor.PID
	env      *env
	timeout  time.Duration
	stopOnce sync.Once
	feeds    sync.WaitGroup
	stopFeed context.CancelFunc
}

// Start loads every object from the store, spawns its actor and returns the system.
func Start(opts Options) (*System, error) {
	if opts.Store == nil {
		return nil, errors.New("actors: no store")
	}
	if opts.Log == nil {
		opts.Log = logrus.StandardLogger()
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.EventTTL <= 0 {
		opts.EventTTL = DefaultEventTTL
	}
	if opts.ResourceQuotaSyncPeriod <= 0 {
		opts.ResourceQuotaSyncPeriod = resourcequota.DefaultSyncPeriod
	}
	if opts.SyncPacing == 0 {
		opts.SyncPacing = DefaultSyncPacing
	}
	if len(opts.Resources) == 0 {
		opts.Resources = DefaultResources
	}
	if err := opts.Nodes.withDefaults(); err != nil {
		return nil, fmt.Errorf("actors: %w", err)
	}
	if err := opts.Services.withDefaults(); err != nil {
		return nil, fmt.Errorf("actors: %w", err)
	}
	var sched *schedulerConfig
	if opts.Scheduler {
		c, err := newSchedulerConfig(opts)
		if err != nil {
			return nil, fmt.Errorf("actors: %w", err)
		}
		sched = c
	}
	log := opts.Log
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slogBridge{log: log})
	}))
	e := &env{
		store:      opts.Store,
		log:        opts.Log,
		debug:      debugEnabled(opts.Log),
		now:        opts.Clock.Now,
		clock:      opts.Clock,
		root:       sys.Root,
		managers:   make(map[string]*actor.PID, len(opts.Resources)),
		resources:  append([]string(nil), opts.Resources...),
		workers:    newWorkerPool(512, 300),
		nodes:      opts.Nodes,
		services:   opts.Services,
		eventTTL:   opts.EventTTL,
		tracer:     opts.Tracer,
		syncPacing: opts.SyncPacing,
		idleAfter:  idleAfter(opts.IdleAfter),
		sched:      sched,
		admission:  opts.Admission,
		// the quotas' charges (quotas.go)
		requestTimeout:  opts.RequestTimeout,
		quotaSyncPeriod: opts.ResourceQuotaSyncPeriod,
		podGCThreshold:  opts.TerminatedPodGCThreshold,
		pvRecycler:      persistentvolume.RecyclerOptions{Image: cmp.Or(opts.PVRecyclerImage, persistentvolume.DefaultRecyclerImage), Namespace: metav1.NamespaceDefault},
		stats:           newStats(opts.Resources),
		serviceAccounts: opts.ServiceAccounts,
	}
	var rem *remote.Remote
	if opts.Cluster != nil {
		r, err := startRemote(sys, opts.Cluster)
		if err != nil {
			sys.Shutdown()
			return nil, fmt.Errorf("start actors: %w", err)
		}
		rem, e.cluster = r, &cluster{self: opts.Cluster.Name, leader: opts.Cluster.Leader, role: opts.Cluster.Role}
		if len(opts.Cluster.Members) > 0 {
			p, err := newPlacement(opts.Cluster.Name, opts.Cluster.Members, opts.Cluster.LeaderName)
			if err != nil {
				rem.Shutdown(false)
				sys.Shutdown()
				return nil, err
			}
			e.cluster.view.Store(p)
		}
	}
	bindQuotas(opts.Admission, e)
	for _, r := range e.resources {
		e.managers[r] = sys.NewLocalPID(rootName + "/" + r)
	}
	e.supervisor = sys.NewLocalPID(rootName)
	from := opts.Store.Revision() // the managers load at least this much
	props := actor.PropsFromProducer(func() actor.Actor { return &supervisor{env: e} },
		actor.WithSupervisor(restartStrategy(e.log)), actor.WithDispatcher(e.workers),
		actor.WithReceiverMiddleware(e.receiveWire)) // singletons' messages from other members
	root, err := sys.Root.SpawnNamed(props, rootName)
	if err != nil {
		if rem != nil {
			rem.Shutdown(false)
		}
		sys.Shutdown()
		return nil, fmt.Errorf("start actors: %w", err)
	}
	s := &System{remote: rem, system: sys, root: root, env: e, timeout: opts.RequestTimeout}
	// The root spawns the managers before answering; each manager loads its
	// objects before answering.
	if err := wait(sys.Root, root, opts.RequestTimeout); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start actors: %w", err)
	}
	for r, pid := range e.managers {
		if err := wait(sys.Root, pid, opts.RequestTimeout); err != nil {
			s.Stop()
			return nil, fmt.Errorf("start %s manager: %w", r, err)
		}
	}
	s.startFeeds(from)
	return s, nil
}

// startFeeds starts the feeds the controllers need, from revision from (changes
// before it were loaded with the objects).
func (s *System) startFeeds(from int64) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopFeed = cancel
	feeds := []struct {
		f        *feed
		everyone string // the kind whose every actor looks again if the feed falls behind
	}{
		{&feed{env: s.env, resource: "pods", routes: []route{podToRCs}}, "replicationcontrollers"},
		{&feed{env: s.env, resource: "pods", routes: []route{podToServices}}, "services"},
		{&feed{env: s.env, resource: "nodes", routes: []route{nodeToLoadBalancers}}, "services"},
		{&feed{env: s.env, resource: "persistentvolumes", routes: []route{volumeToClaims}}, "persistentvolumeclaims"},
		{&feed{env: s.env, resource: "persistentvolumeclaims", routes: []route{claimToVolumes}}, "persistentvolumes"},
		{&feed{env: s.env, resource: "pods", routes: []route{recyclerToVolume}}, "persistentvolumes"},
	}
	if s.env.serviceAccounts != nil {
		feeds = append(feeds, []struct {
			f        *feed
			everyone string
		}{
			{&feed{env: s.env, resource: "secrets", routes: []route{secretToServiceAccount}}, "serviceaccounts"},
			{&feed{env: s.env, resource: "serviceaccounts", routes: []route{defaultAccountToNamespace}}, "namespaces"},
		}...)
	}
	for _, r := range resourcequota.Resources { // what quotas count: their namespace's quotas recount
		feeds = append(feeds, struct {
			f        *feed
			everyone string
		}{&feed{env: s.env, resource: r, routes: []route{toQuotas}}, "resourcequotas"})
	}
	if s.env.cluster != nil {
		for _, r := range movingKinds() { // an actor activated from a lagging store catches up
			feeds = append(feeds, struct {
				f        *feed
				everyone string
			}{&feed{env: s.env, resource: r, routes: []route{toItself}}, r})
		}
	}
	for _, fd := range feeds {
		if _, ok := s.env.managers[fd.f.resource]; !ok {
			continue
		}
		if _, ok := s.env.managers[fd.everyone]; !ok || !s.env.hosts(fd.everyone) {
			continue
		}
		s.feeds.Add(1)
		go func() {
			defer s.feeds.Done()
			fd.f.run(ctx, from, func() []persistence.Key { return s.env.keys(fd.everyone) })
		}()
	}
}

// Stop stops every actor, waiting for writes in progress. It is safe to call twice.
func (s *System) Stop() {
	s.stopOnce.Do(func() {
		if s.stopFeed != nil {
			s.stopFeed()
			s.feeds.Wait()
		}
		if err := s.system.Root.StopFuture(s.root).Wait(); err != nil {
			s.env.log.WithField("error", err).Warn("stop actors")
		}
		if s.remote != nil {
			s.remote.Shutdown(false)
		}
		s.system.Shutdown()
		s.env.workers.stop()
	})
}

// Create asks the object's actor to persist a new, fully prepared object (name, uid,
// creationTimestamp set). It returns the stored object, which is shared: callers must
// DeepCopyObject it before changing it (the same holds for every returned object).
func (s *System) Create(ctx context.Context, key persistence.Key, obj runtime.Object) (runtime.Object, error) {
	r, err := s.ask(ctx, "create", key, &createRequest{envelope: s.envelopeOf(ctx, key), write: writeOf(ctx), object: obj})
	if err != nil {
		return nil, err
	}
	return r.object, nil
}

// Update asks the object's actor to persist obj as the new state if pre holds. The
// actor takes ownership of obj.
func (s *System) Update(ctx context.Context, key persistence.Key, obj runtime.Object, pre command.Preconditions) (runtime.Object, error) {
	r, err := s.ask(ctx, "update", key, &updateRequest{envelope: s.envelopeOf(ctx, key), write: writeOf(ctx), object: obj, pre: pre})
	if err != nil {
		return nil, err
	}
	return r.object, nil
}

// Delete asks the object's actor to delete it. It returns the object's last state and
// whether it is gone (false when a grace period or finalizers keep it for now, in which
// case the returned object carries its deletionTimestamp).
func (s *System) Delete(ctx context.Context, key persistence.Key, opts DeleteOptions) (runtime.Object, bool, error) {
	r, err := s.ask(ctx, "delete", key, &deleteRequest{envelope: s.envelopeOf(ctx, key), write: writeOf(ctx), opts: opts})
	if err != nil {
		return nil, false, err
	}
	return r.object, r.gone, nil
}

// InjectPanic makes the actor of key panic after answering (a test hook for
// supervision): it restarts, keeps its PID and reloads its object from the store.
func (s *System) InjectPanic(ctx context.Context, key persistence.Key) error {
	_, err := s.ask(ctx, "inject panic", key, &panicRequest{s.envelopeOf(ctx, key)})
	return err
}

// ask sends a request to the key's manager and waits for the object actor's reply.
func (s *System) ask(ctx context.Context, op string, key persistence.Key, msg routed) (*reply, error) {
	res, err := s.request(ctx, key, msg)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s/%s: %w", op, key.Resource, key.Namespace, key.Name, err)
	}
	r, ok := res.(*reply)
	if !ok {
		return nil, fmt.Errorf("%s %s %s/%s: unexpected answer %T", op, key.Resource, key.Namespace, key.Name, res)
	}
	return r, r.err
}

func (s *System) request(ctx context.Context, key persistence.Key, msg routed) (any, error) {
	pid, ok := s.env.managers[key.Resource]
	if !ok {
		return nil, fmt.Errorf("resource %q: %w", key.Resource, ErrUnknownResource)
	}
	timeout := s.timeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("%w: %w", ErrTimeout, context.DeadlineExceeded)
	}
	res, err := s.system.Root.RequestFuture(pid, msg, timeout).Result()
	switch {
	case errors.Is(err, actor.ErrTimeout):
		return nil, fmt.Errorf("%w after %s", ErrTimeout, timeout)
	case errors.Is(err, actor.ErrDeadLetter):
		return nil, fmt.Errorf("%w: actor unavailable", ErrTimeout)
	case err != nil:
		return nil, err
	}
	return fromWire(res) // the answer of an actor on another member
}

type traceKey struct{}

// WithTrace returns a context carrying the trace id of the request that caused it.
func WithTrace(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// TraceID returns the trace id carried by ctx, or "".
func TraceID(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}

// Healthy reports whether the root supervisor and every kind manager answer within
// the context's deadline (componentstatuses shows it).
func (s *System) Healthy(ctx context.Context) error {
	timeout := s.timeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	if err := wait(s.system.Root, s.root, timeout); err != nil {
		return fmt.Errorf("root supervisor: %w", err)
	}
	for r, pid := range s.env.managers {
		if err := wait(s.system.Root, pid, timeout); err != nil {
			return fmt.Errorf("%s manager: %w", r, err)
		}
	}
	return nil
}

// idleAfter is Options.IdleAfter with its default: 0 for never.
func idleAfter(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultIdleAfter
	case d < 0:
		return 0
	}
	return d
}
