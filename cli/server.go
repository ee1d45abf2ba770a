package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// serverCmd and upCmd embed config.Server, whose Validate kong runs while parsing:
// a bad flag is a usage error (exit 2) before anything starts.
type serverCmd struct {
	config.Server
}

func (c *serverCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, c.Server, g.log, sdNotifyReady(g.log))
}

type upCmd struct {
	config.Server
	Simulate int `name:"simulate" default:"0" help:"Run this many simulated nodes instead of the Docker node agent (kubeactor agent --simulate N)."`
}

// Run starts the server and, in the same process, one Docker node agent (or with
// --simulate N simulated nodes). Without a reachable engine it stops before
// starting anything.
func (c *upCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	agent, err := defaultAgent()
	if err != nil {
		return err
	}
	if c.Simulate == 0 {
		if err := dockerPreflight(ctx, agent, g.log); err != nil {
			return err
		}
	}
	return serve(ctx, c.Server, g.log, func(addr string, sec *securePort) {
		fmt.Fprintf(g.stdout, "kubeactor is up: API at http://%s (data in %s)\n", addr, c.DataDir)
		fmt.Fprintf(g.stdout, "try: kubectl -s http://%s get nodes,pods\n", addr)
		sec.printKubeconfig(g.stdout, c.Server, g.log)
		agent.Server, agent.Simulate = "http://"+addr, c.Simulate
		go func() {
			run, what := runDocker, "node agent"
			if c.Simulate > 0 {
				run, what = simulate, "simulated nodes"
			}
			if err := run(ctx, agent, g.log); err != nil && ctx.Err() == nil {
				g.log.WithError(err).Error(what + " stopped")
				stop()
			}
		}()
	})
}

// serve runs the store, the actor system and the gateway until ctx ends. ready, when
// not nil, is called with the insecure listening address and the secure port once
// requests are being served.
func serve(ctx context.Context, cfg config.Server, log *logrus.Logger, ready func(addr string, sec *securePort)) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(cfg.GCPercent)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	store, err := persistence.Open(persistence.Options{
		Dir:             cfg.DataDir,
		ChangeLogWindow: cfg.ChangeLogWindow,
		NewObject:       newObject,
	})
	if err != nil {
		return fmt.Errorf("open store in %s: %w", cfg.DataDir, err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.WithError(err).Error("close store")
		}
	}()

	nodes, services, err := controllerOptions(cfg)
	if err != nil {
		return err
	}
	adm, err := actors.NewAdmission(store, actors.AdmissionConfig{Plugins: cfg.AdmissionControl, AllowPrivileged: cfg.AllowPrivileged})
	if err != nil {
		return err
	}
	var tracer *tracing.Tracer
	if cfg.Tracing {
		if tracer, err = tracing.New(tracing.Options{Sampling: cfg.TraceSampling, Capacity: cfg.TraceSpans,
			OTLPEndpoint: cfg.OTLPEndpoint, Service: "kubeactor-server"}); err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tracer.Shutdown(sctx); err != nil {
				log.WithError(err).Warn("flush traces")
			}
		}()
	}
	sys, err := actors.Start(actors.Options{Store: store, Tracer: tracer, Log: log, RequestTimeout: cfg.RequestTimeout, EventTTL: cfg.EventTTL,
		Nodes: nodes, Services: services,
		Scheduler: true, SchedulerShards: cfg.SchedulerShards, SchedulerPolicy: cfg.SchedulerPolicy,
		Admission: adm.Chain, ResourceQuotaSyncPeriod: cfg.ResourceQuotaSyncPeriod,
		TerminatedPodGCThreshold: cfg.TerminatedPodGCThreshold})
	if err != nil {
		return fmt.Errorf("start actors: %w", err)
	}
	defer sys.Stop()
	adm.Bind(sys)

	sec, err := newSecurity(cfg, time.Now())
	if err != nil {
		return err
	}
	gw, err := gateway.New(gateway.Config{Store: store, Actors: sys, Log: log, MaxBodyBytes: cfg.MaxRequestBodyBytes, Profiling: cfg.Profiling, TestHooks: cfg.EnableTestHooks,
		Authenticator: sec.authn, Authorizer: sec.authz, Tracer: tracer})
	if err != nil {
		return fmt.Errorf("start gateway: %w", err)
	}
	if err := gw.Bootstrap(ctx); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}

	ln, err := net.Listen("tcp", cfg.Address())
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Address(), err)
	}
	srv := &http.Server{Handler: gw.Handler()}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	server, err := advertised(cfg, ln.Addr())
	if err == nil {
		err = sys.EnsureKubernetesService(ctx, server)
	}
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("bootstrap kubernetes service: %w", err)
	}
	defer startDNS(ctx, cfg, store, sys, log)()
	secure, err := serveSecure(cfg, sec, gw.SecureHandler(), errc)
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	log.WithFields(logrus.Fields{"address": addr, "secure-address": secure.address(), "data-dir": cfg.DataDir, "revision": store.Revision()}).Info("serving")
	if ready != nil {
		ready(addr, secure)
	}

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGracePeriod)
	defer cancel()
	if err := secure.shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// newObject decodes stored objects: the store knows resources by name only.
func newObject(res string) (runtime.Object, error) {
	r, ok := kinds.Lookup(res)
	if !ok {
		return nil, fmt.Errorf("unknown resource %q", res)
	}
	return r.New(), nil
}
