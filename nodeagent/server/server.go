package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// DefaultPort is the agent's port when Config leaves it unset (the kubelet's).
const DefaultPort = 10250

// Host is what the server needs from the agent.
type Host interface {
	// Pods returns the pods this agent runs, with their current status.
	Pods() []*corev1.Pod
	// ContainerID resolves a container of a pod to its engine id: the latest
	// instance, or with previous the one before it. An error satisfying
	// runtime.IsNotFound answers 404, others 500.
	ContainerID(namespace, pod, container string, previous bool) (string, error)
	// PodIP is the pod's address, which port-forward dials from the host.
	PodIP(namespace, pod string) (string, error)
}

// Config is what the server needs.
type Config struct {
	Address  string // "" for every interface
	Port     int    // 0 picks a free port (tests); the agent passes DefaultPort
	NodeName string
	Runtime  runtime.Runtime
	Host     Host
	Log      *logrus.Logger
	// Now is the clock for sinceSeconds; nil means time.Now.
	Now func() time.Time
	// Metrics serves GET /metrics on both ports (nodeagent/metrics); nil for none.
	Metrics http.Handler
	// Summary serves GET /stats/summary on both ports (nodeagent/stats.Collector);
	// nil answers 503.
	Summary SummarySource
}

// SummarySource gives the last collected stats Summary; ok is false before the first.
type SummarySource interface {
	Summary() (summary statsapi.Summary, ok bool)
}

// Server serves the agent's HTTP API. It is safe for concurrent use.
type Server struct {
	cfg             Config
	log             logrus.FieldLogger
	now             func() time.Time
	handler         http.Handler
	readOnlyHandler http.Handler
	addr            atomic.Value // string, once Run has bound
}

// streamIdleTimeout ends an exec or port-forward session nobody uses (the kubelet's
// default streaming-connection-idle-timeout).
const streamIdleTimeout = 4 * time.Hour

// New builds the server and its routes.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, now: cfg.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.Log != nil {
		s.log = cfg.Log.WithField("node", cfg.NodeName)
	} else {
		s.log = logrus.StandardLogger().WithField("node", cfg.NodeName)
	}
	mux := http.NewServeMux()
	s.readOnly(mux)
	mux.HandleFunc("GET /containerLogs/{path...}", s.serveLogs)
	mux.HandleFunc("/exec/{path...}", s.serveExec)
	mux.HandleFunc("/attach/{path...}", s.serveAttach)
	mux.HandleFunc("/portForward/{path...}", s.servePortForward)
	mux.HandleFunc("POST /run/{path...}", s.serveRun)
	s.handler = mux
	ro := http.NewServeMux()
	s.readOnly(ro)
	s.readOnlyHandler = ro
	return s
}

// readOnly mounts what the read-only port serves: pods, spec, stats, health and metrics.
func (s *Server) readOnly(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", serveHealthz)
	mux.HandleFunc("GET /pods", s.servePods)
	mux.HandleFunc("GET /pods/{$}", s.servePods)
	mux.HandleFunc("GET /spec", s.serveSpec)
	mux.HandleFunc("GET /spec/{$}", s.serveSpec)
	mux.HandleFunc("GET /stats", s.serveAllStats)
	mux.HandleFunc("GET /stats/{$}", s.serveAllStats)
	mux.HandleFunc("GET /stats/{namespace}/{pod}/{uid}/{container}", s.serveContainerStats)
	mux.HandleFunc("GET /stats/summary", s.serveSummary)
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", s.cfg.Metrics)
	}
}

func serveHealthz(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, "ok") }

// Handler is the server's HTTP handler (the kubelet's port, 10250).
func (s *Server) Handler() http.Handler { return s.handler }

// ReadOnlyHandler serves the kubelet's read-only port (10255): pods, spec, stats and
// healthz; no logs, exec, port-forward or run.
func (s *Server) ReadOnlyHandler() http.Handler { return s.readOnlyHandler }

// HealthzHandler serves the kubelet's healthz port (10248): /healthz only.
func HealthzHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", serveHealthz)
	return mux
}

// Addr is the address Run listens on, "" until it has bound.
func (s *Server) Addr() string {
	a, _ := s.addr.Load().(string)
	return a
}

// Run listens and serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Address, strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return fmt.Errorf("agent server: listen: %w", err)
	}
	s.addr.Store(ln.Addr().String())
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 30 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	s.log.WithField("address", ln.Addr().String()).Info("agent server listening")
	select {
	case err := <-done:
		return fmt.Errorf("agent server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("agent server: %w", err)
	}
	return nil
}

// errorCode is the HTTP status for an error from the Host or the runtime.
func errorCode(err error) int {
	if runtime.IsNotFound(err) {
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeText(w, code, err.Error()+"\n")
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("encode: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(data, '\n'))
}

// resolve finds the engine id of a container named by a path, answering the error
// itself when it fails.
func (s *Server) resolve(w http.ResponseWriter, pp podPath, previous bool) (string, bool) {
	id, err := s.cfg.Host.ContainerID(pp.namespace, pp.pod, pp.container, previous)
	if err != nil {
		writeError(w, errorCode(err), fmt.Errorf("container %s of pod %s/%s: %w", pp.container, pp.namespace, pp.pod, err))
		return "", false
	}
	return id, true
}
