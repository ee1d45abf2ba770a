package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/scheduler"
	"github.com/kubeactor/kubeactor/gateway/authn"
	"github.com/kubeactor/kubeactor/gateway/authz"
	"github.com/kubeactor/kubeactor/gateway/openapi"
	"github.com/kubeactor/kubeactor/gateway/ui"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// DefaultMaxBodyBytes is the largest request body accepted when Config leaves it 0
// (the real API server's limit).
const DefaultMaxBodyBytes = 3 << 20

// Config is what the gateway needs to serve.
type Config struct {
	Store *persistence.Store
	// Actors is the control plane's actor system, when it runs from the start (a store
	// of one). Nil: none yet; SetActors gives it when this replica becomes the leader.
	// Without one, writes are forwarded to the leader (forward.go) or, on the leader
	// itself, answered 503 until it is up.
	Actors *actors.System
	// Name is this replica's name (peer headers, logs); "" for a store of one.
	Name string
	Log  logrus.FieldLogger
	// MaxBodyBytes limits request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Now is the clock for creationTimestamp and table ages; nil means time.Now.
	Now func() time.Time
	// BookmarkInterval is how often an idle watch that allows bookmarks gets one;
	// 0 means one second.
	BookmarkInterval time.Duration
	// MinWatchTimeout is the shortest server-chosen watch duration (a watch without
	// timeoutSeconds lasts a random time between it and twice it); 0 means 30 minutes.
	MinWatchTimeout time.Duration
	// OpenAPI serves /openapi/v2 and /openapi/v3; nil means openapi.Handler().
	OpenAPI http.Handler
	// WatchCoalesce is the shortest time between two writes to one watch stream under
	// load (events in between share a write); 0 means 20ms.
	WatchCoalesce time.Duration
	// Profiling serves Go's profiles under /debug/pprof/ (the book's --profiling).
	Profiling bool
	// Authenticator and Authorizer guard the requests of SecureHandler (the secure
	// port); nil means every such request is anonymous, and allowed.
	Authenticator *authn.Union
	Authorizer    authz.Authorizer
	// Registry is where the server registers its metrics (served at GET /metrics,
	// metrics.go); nil means a registry of its own. Never the global default one.
	Registry *prometheus.Registry
	// Tracer traces requests and serves the traces and explain paths (tracing.go);
	// nil traces nothing.
	Tracer *tracing.Tracer
	// SchedulerPolicy is the scheduler's --policy-config-file (nil: the default
	// policy), so that explain evaluates pods as the scheduler does (explain.go).
	SchedulerPolicy []byte
	// NodeMonitoring is the node controller's timing (grace periods, pod eviction
	// timeout) that explain words a node's future with; zero fields mean the defaults.
	NodeMonitoring node.Config
	// TestHooks serves POST /debug/kubeactor/panic?resource=&namespace=&name=, which
	// makes that object's actor panic (e2e tests of supervision). Never in production.
	TestHooks bool
}

// Server is the API server. It is safe for concurrent use.
type Server struct {
	store  *persistence.Store
	actors atomic.Pointer[actors.System]
	booted atomic.Bool // the control plane's bootstrap objects are written (readyz)
	// actorMembers is this replica's view of the actor cluster (SetActorMembers).
	actorMembers atomic.Pointer[[]string]
	name         string
	log          logrus.FieldLogger
	maxBody      int64
	now          func() time.Time

	bookmarkEvery time.Duration
	minWatch      time.Duration
	watchCoalesce time.Duration

	authn *authn.Union
	authz authz.Authorizer

	metrics     *serverMetrics  // metrics.go
	tracer      *tracing.Tracer // tracing.go
	spanNames   spanNames       // the request spans' names (tracing.go)
	protoEvents protoEvents     // watch.go

	policy    scheduler.Policy // explain.go
	nodeTimes node.Config      // explain.go

	echo    *echo.Echo
	peer    *forwarder  // forward.go
	replica replicaView // the store, as a replica
}

// New checks cfg, fills its defaults and builds the routes.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("gateway: Store is required")
	}
	s := &Server{
		store: cfg.Store, name: cfg.Name, log: cfg.Log, maxBody: cfg.MaxBodyBytes, now: cfg.Now,
		bookmarkEvery: cfg.BookmarkInterval, minWatch: cfg.MinWatchTimeout, watchCoalesce: cfg.WatchCoalesce,
		authn: cfg.Authenticator, authz: cfg.Authorizer, tracer: cfg.Tracer,
	}
	s.actors.Store(cfg.Actors)
	s.booted.Store(cfg.Actors != nil)
	if err := s.explainConfig(cfg); err != nil {
		return nil, err
	}
	s.replica = cfg.Store
	if s.log == nil {
		s.log = logrus.StandardLogger()
	}
	s.peer = newForwarder(s)
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.bookmarkEvery <= 0 {
		s.bookmarkEvery = time.Second
	}
	if s.watchCoalesce <= 0 {
		s.watchCoalesce = 20 * time.Millisecond
	}
	if s.minWatch <= 0 {
		s.minWatch = 30 * time.Minute
	}
	oa := cfg.OpenAPI
	if oa == nil {
		h, err := openapi.Handler()
		if err != nil {
			return nil, fmt.Errorf("gateway: openapi: %w", err)
		}
		oa = h
	}

	m, err := newServerMetrics(cfg.Registry, cfg.Store, s.actors.Load)
	if err != nil {
		return nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	s.metrics = m

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.measure, s.traceAndLog, middleware.Recover(), s.guard, s.replicas) // measure: metrics.go; guard: secure.go; replicas: forward.go
	s.echo = e
	s.mountReplicas(e) // forward.go

	s.mountDiscovery(e)
	s.mountTroubleshooting(e) // tracing.go
	e.GET("/metrics", echo.WrapHandler(m.handler()))
	e.GET("/openapi/v2", echo.WrapHandler(oa))
	e.GET("/openapi/v3", echo.WrapHandler(oa))
	e.GET("/openapi/v3/*", echo.WrapHandler(oa))
	e.Any("/api/v1/proxy/*", s.connectLegacy(s.legacyProxyRoute)) // connect.go
	ui.Mount(e)                                                   // the dashboard at /ui
	if cfg.Profiling {
		e.Any("/debug/pprof/*", echo.WrapHandler(profiles()))
	}
	if cfg.TestHooks {
		e.POST("/debug/kubeactor/panic", s.injectPanic)
	}
	for _, r := range kinds.All() {
		s.mount(e, r)
	}
	return s, nil
}

// Handler is the HTTP handler of the API.
func (s *Server) Handler() http.Handler { return s.echo }

// SetActors gives the gateway the actor system this replica now runs (it became the
// leader), or takes it away (nil: it stopped being the leader).
func (s *Server) SetActors(sys *actors.System) {
	if sys == nil {
		s.booted.Store(false)
	}
	s.actors.Store(sys)
}

// Booted says that the control plane given by SetActors has written its bootstrap
// objects: /readyz answers 200 on the leader from then on.
func (s *Server) Booted() { s.booted.Store(s.actors.Load() != nil) }

// system is the local actor system, or a 503 when this replica runs none (it is not
// the leader, or is still starting the control plane).
func (s *Server) system() (*actors.System, error) {
	if sys := s.actors.Load(); sys != nil {
		return sys, nil
	}
	return nil, unavailable("the control plane is not running on this replica (a leader change is in progress)")
}

// request is what a route knows about the call: the resource and the path's parts.
type request struct {
	res       *kinds.Resource
	namespace string // from the path; "" for cluster-scoped kinds and all-namespace calls
	name      string
	sub       string
	watchPath bool // a /api/v1/watch/... path
}

// key is the store key of the named object.
func (rq *request) key() persistence.Key {
	return persistence.Key{Resource: rq.res.Name, Namespace: rq.namespace, Name: rq.name}
}

const requestKey = "kubeactor.request"

// op is one of the handlers a route runs.
type op func(c echo.Context, rq *request) error

// bind makes an echo handler of op for resource r and subresource sub.
func (s *Server) bind(r *kinds.Resource, sub string, watchPath bool, fn op) echo.HandlerFunc {
	return func(c echo.Context) error {
		rq := &request{res: r, namespace: c.Param("namespace"), name: c.Param("name"), sub: sub, watchPath: watchPath}
		c.Set(requestKey, rq)
		return fn(c, rq)
	}
}

// routeVerbs maps a discovery verb to the method and the path form (collection or
// item) it is served on.
var routeVerbs = []struct {
	verb, method string
	item         bool
}{
	{"list", http.MethodGet, false},
	{"create", http.MethodPost, false},
	{"deletecollection", http.MethodDelete, false},
	{"get", http.MethodGet, true},
	{"update", http.MethodPut, true},
	{"patch", http.MethodPatch, true},
	{"delete", http.MethodDelete, true},
}

// streamingSubresources are served by node agents and pods (proxy.go).
var streamingSubresources = map[string]bool{"log": true, "exec": true, "portforward": true, "proxy": true, "attach": true}

// mount registers every route of one kinds.
func (s *Server) mount(e *echo.Echo, r *kinds.Resource) {
	verbs := map[string]bool{}
	for _, v := range r.Verbs {
		verbs[v] = true
	}
	ops := map[string]op{
		"list": s.list, "create": s.create, "deletecollection": s.deleteCollection,
		"get": s.get, "update": s.update, "patch": s.patch, "delete": s.delete,
	}
	if r.Name == "componentstatuses" { // probed on request, never stored
		ops["list"], ops["get"] = s.listComponents, s.getComponent
	}
	collection := "/api/v1/" + r.Name
	watchCollections := []string{"/api/v1/watch/" + r.Name}
	collections := []string{collection}
	if r.Namespaced {
		collection = "/api/v1/namespaces/:namespace/" + r.Name
		collections = append(collections, collection)
		watchCollections = append(watchCollections, "/api/v1/watch/namespaces/:namespace/"+r.Name)
	}
	item := collection + "/:name"
	for _, rv := range routeVerbs {
		if !verbs[rv.verb] {
			continue
		}
		if rv.item {
			e.Add(rv.method, item, s.bind(r, "", false, ops[rv.verb]))
			continue
		}
		for _, p := range collections {
			if rv.verb == "deletecollection" && r.Namespaced && p == "/api/v1/"+r.Name {
				continue // the real API has no cross-namespace deletecollection
			}
			e.Add(rv.method, p, s.bind(r, "", false, ops[rv.verb]))
		}
	}
	if verbs["watch"] {
		for _, p := range watchCollections {
			e.GET(p, s.bind(r, "", true, s.list))
		}
		e.GET(watchCollections[len(watchCollections)-1]+"/:name", s.bind(r, "", true, s.list))
	}
	subs := append([]string(nil), r.Subresources...)
	if r.Kind == "Pod" {
		for name := range streamingSubresources {
			if name != "proxy" && !containsString(subs, name) {
				subs = append(subs, name)
			}
		}
	}
	for _, sub := range subs {
		p := item + "/" + sub
		switch {
		case sub == "status":
			e.GET(p, s.bind(r, sub, false, s.get))
			e.PUT(p, s.bind(r, sub, false, s.update))
			e.PATCH(p, s.bind(r, sub, false, s.patch))
		case sub == "scale":
			e.GET(p, s.bind(r, sub, false, s.getScale))
			e.PUT(p, s.bind(r, sub, false, s.updateScale))
			e.PATCH(p, s.bind(r, sub, false, s.patchScale))
		case sub == "binding":
			e.POST(p, s.bind(r, sub, false, s.createBinding))
		case sub == "finalize":
			e.PUT(p, s.bind(r, sub, false, s.finalize))
		case streamingSubresources[sub]:
			e.Any(p, s.bind(r, sub, false, s.connect(s.streaming)))
			e.Any(p+"/*", s.bind(r, sub, false, s.connect(s.streaming)))
		}
	}
	if r.Kind == "Pod" && !containsString(subs, "proxy") {
		e.Any(item+"/proxy", s.bind(r, "proxy", false, s.connect(s.streaming)))
		e.Any(item+"/proxy/*", s.bind(r, "proxy", false, s.connect(s.streaming)))
	}
}

// Bootstrap creates the namespaces every cluster has, "default" and "kube-system",
// when they are missing.
func (s *Server) Bootstrap(ctx context.Context) error {
	r, ok := kinds.Lookup("namespaces")
	if !ok {
		return errors.New("gateway: bootstrap: no namespaces resource")
	}
	ctx = actors.WithBootstrap(ctx)
	for _, name := range kinds.BootstrapNamespaces {
		rq := &request{res: r, name: name}
		if _, err := s.store.Get(rq.key()); err == nil {
			continue
		} else if !errors.Is(err, persistence.ErrNotFound) {
			return fmt.Errorf("gateway: bootstrap namespace %s: %w", name, err)
		}
		ns := r.New()
		accessor, err := metaOf(ns)
		if err != nil {
			return fmt.Errorf("gateway: bootstrap namespace %s: %w", name, err)
		}
		accessor.SetName(name)
		if _, err := s.createObject(ctx, rq, ns, false); err != nil && !isAlreadyExists(err) {
			return fmt.Errorf("gateway: bootstrap namespace %s: %w", name, err)
		}
	}
	return nil
}

// traceAndLog gives each request its trace id (from traceparent, X-Request-Id or a new
// one), echoes it in Audit-Id, and logs one debug line when the request ends. It also
// names the request's user for admission: anonymous, until guard (secure.go) names the
// authenticated user of a secure-port request.
func (s *Server) traceAndLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		req := c.Request()
		ctx, sp := s.startRequest(c) // tracing.go
		var id string
		if sp != nil {
			id = sp.SpanContext().TraceID().String()
		} else {
			id = traceID(req.Header)
		}
		c.Response().Header().Set("Audit-Id", id)
		c.SetRequest(req.WithContext(actors.WithUser(actors.WithTrace(ctx, id), admission.Anonymous)))
		if err := next(c); err != nil {
			c.Error(err)
		}
		endRequest(sp, req, c.Response().Status)
		if logsDebug(s.log) {
			s.log.WithFields(logrus.Fields{
				"method": req.Method, "path": req.URL.Path, "query": req.URL.RawQuery,
				"status": c.Response().Status, "bytes": c.Response().Size,
				"duration": time.Since(start), "trace": id,
			}).Debug("request")
		}
		return nil
	}
}

// logsDebug tells whether log writes debug entries, so that a request skips building
// the fields of its access log line otherwise (checked per request: the level can change).
func logsDebug(log logrus.FieldLogger) bool {
	switch l := log.(type) {
	case nil:
		return false
	case *logrus.Logger:
		return l.IsLevelEnabled(logrus.DebugLevel)
	case *logrus.Entry:
		return l.Logger.IsLevelEnabled(logrus.DebugLevel)
	default:
		return true
	}
}

// traceID takes the trace-id part of a W3C traceparent, else X-Request-Id, else a new id.
func traceID(h http.Header) string {
	if tp := h.Get("traceparent"); tp != "" {
		parts := strings.Split(tp, "-")
		if len(parts) >= 4 && len(parts[1]) == 32 {
			return parts[1]
		}
	}
	if id := h.Get("X-Request-Id"); id != "" && len(id) <= 128 {
		return id
	}
	return newUID()
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// injectPanic is the test hook behind --enable-test-hooks: the named object's actor
// answers, then panics, and its supervisor restarts it.
func (s *Server) injectPanic(c echo.Context) error {
	key := persistence.Key{Resource: c.QueryParam("resource"), Namespace: c.QueryParam("namespace"), Name: c.QueryParam("name")}
	sys, err := s.system()
	if err != nil {
		return err
	}
	if err := sys.InjectPanic(c.Request().Context(), key); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// profiles serves Go's profiles under /debug/pprof/, mounted on a mux of its own
// rather than through net/http/pprof's registration on http.DefaultServeMux.
func profiles() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
