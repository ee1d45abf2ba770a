package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/internal/memory"
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
	memory.Start(ctx, memoryPolicy(c.Server), g.log)
	return serve(ctx, c.Server, g.log, sdNotifyReady(g.log))
}

type upCmd struct {
	config.Server
	Simulate int `name:"simulate" default:"0" help:"Run this many simulated nodes instead of the Docker node agent (kubeactor agent --simulate N)."`
	Masters  int `name:"masters" default:"1" help:"Master replicas to run, in this process (3 or 5 survive the loss of one or two): each has its data in <data-dir>/mN, its own ports (the next ones after --insecure-port, --secure-port and 2380 for the peers) and they share one replicated store; the node agent is given them all."`
}

// Run starts the server and, in the same process, one Docker node agent (or with
// --simulate N simulated nodes). Without a reachable engine it stops before
// starting anything.
func (c *upCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.Masters < 1 || c.Masters > 7 {
		return fmt.Errorf("--masters %d: must be from 1 to 7", c.Masters)
	}
	if c.Masters > 1 && c.Clustered() {
		return fmt.Errorf("--masters %d makes its own cluster: give no --initial-cluster or --join", c.Masters)
	}
	// One policy for the process, however many replicas it runs: they share its heap.
	memory.Start(ctx, memoryPolicy(c.Server), g.log)
	agent, err := defaultAgent()
	if err != nil {
		return err
	}
	if c.Simulate == 0 {
		if err := dockerPreflight(ctx, agent, g.log); err != nil {
			return err
		}
	}
	startAgent := func(servers string) {
		agent.Server, agent.Simulate = servers, c.Simulate
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
	}
	if c.Masters > 1 {
		return c.runMasters(ctx, stop, g, startAgent)
	}
	return serve(ctx, c.Server, g.log, func(addr string, sec *securePort) {
		fmt.Fprintf(g.stdout, "kubeactor is up: API at http://%s (data in %s)\n", addr, c.DataDir)
		fmt.Fprintf(g.stdout, "try: kubectl -s http://%s get nodes,pods\n", addr)
		sec.printKubeconfig(g.stdout, c.Server, g.log)
		startAgent("http://" + addr)
	})
}

// peerBasePort is the first master replica's peer port in `up --masters N`.
const peerBasePort = 2380

// replicaConfigs derives the configuration of each of n master replicas from one:
// names m1..mn, data in <data-dir>/mN, the next ports after the given ones (0 stays
// 0: a free port), peers on loopback from 2380, DNS served by m1 only.
func replicaConfigs(base config.Server, n int) []config.Server {
	cluster := map[string]string{}
	var entries []string
	for i := range n {
		name := fmt.Sprintf("m%d", i+1)
		cluster[name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(peerBasePort+i))
		entries = append(entries, name+"="+cluster[name])
	}
	out := make([]config.Server, n)
	for i := range out {
		cfg := base
		cfg.Name = fmt.Sprintf("m%d", i+1)
		cfg.DataDir = filepath.Join(base.DataDir, cfg.Name)
		cfg.PeerAddress, cfg.Cluster, cfg.InitialCluster = cluster[cfg.Name], cluster, strings.Join(entries, ",")
		if base.InsecurePort > 0 {
			cfg.InsecurePort = base.InsecurePort + i
		}
		if base.SecurePort > 0 {
			cfg.SecurePort = base.SecurePort + i
		}
		if i > 0 {
			cfg.DNSPort = 0 // one DNS server: the ports would collide
		}
		out[i] = cfg
	}
	return out
}

// runMasters runs `up --masters N`: N replicas in this process, then the node agent
// given them all; it prints their addresses.
func (c *upCmd) runMasters(ctx context.Context, stop func(), g *globals, startAgent func(servers string)) error {
	cfgs := replicaConfigs(c.Server, c.Masters)
	// The replicas share --cert-dir: make its CA and certificates once, before they start.
	if _, err := newSecurity(cfgs[0], &actors.StoreAccounts{}, time.Now()); err != nil {
		return err
	}
	type up struct {
		i    int
		addr string
		sec  *securePort
	}
	ready := make(chan up, len(cfgs))
	errc := make(chan error, len(cfgs))
	for i, cfg := range cfgs {
		go func() {
			err := serve(ctx, cfg, g.log, func(addr string, sec *securePort) { ready <- up{i, addr, sec} })
			if err != nil {
				err = fmt.Errorf("%s: %w", cfg.Name, err)
			}
			errc <- err
			stop()
		}()
	}
	ups := make([]up, len(cfgs))
	for range cfgs {
		select {
		case u := <-ready:
			ups[u.i] = u
		case err := <-errc:
			return err
		}
	}
	var urls []string
	fmt.Fprintf(g.stdout, "kubeactor is up with %d master replicas (data in %s):\n", len(cfgs), c.DataDir)
	for i, u := range ups {
		urls = append(urls, "http://"+u.addr)
		fmt.Fprintf(g.stdout, "  %s: API at http://%s, secure API at https://%s, peers at %s\n", cfgs[i].Name, u.addr, u.sec.address(), cfgs[i].PeerAddress)
	}
	fmt.Fprintf(g.stdout, "try: kubectl -s %s get nodes,pods; kubeactor members -s %s\n", urls[0], strings.Join(urls, ","))
	ups[0].sec.printKubeconfig(g.stdout, cfgs[0], g.log)
	startAgent(strings.Join(urls, ","))
	var first error
	for range cfgs {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// memoryPolicy is the garbage-collection policy cfg's memory flags describe.
func memoryPolicy(cfg config.Server) memory.Policy {
	headroom, limit := cfg.MemorySizes()
	return memory.Policy{MaxPercent: cfg.GCPercent, MinPercent: cfg.GCMinPercent, Headroom: headroom, Limit: limit}
}

// serve runs the store, the actor system and the gateway until ctx ends. ready, when
// not nil, is called with the insecure listening address and the secure port once
// requests are being served.
//
// With --initial-cluster or --join the store is one replica of a Raft cluster: every
// replica serves the API, and the actor system runs on the leader only (leader.go).
// A store of one is its own leader from the start: its control plane starts before
// the API is served, as it always did.
func serve(ctx context.Context, cfg config.Server, log *logrus.Logger, ready func(addr string, sec *securePort)) error {
	t0 := time.Now()
	prof, err := startStartupProfile(cfg.StartupCPUProfile)
	if err != nil {
		return err
	}
	defer func() {
		if err := prof.stop(); err != nil {
			log.WithError(err).Error("startup cpu profile")
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if cfg.AllowMembers && !cfg.Clustered() {
		if cfg, err = clusterOfOne(cfg); err != nil {
			return err
		}
	}
	nodes, services, err := controllerOptions(cfg)
	if err != nil {
		return err
	}
	// The service-account token authenticator reads accounts and secrets from the
	// store, which opens once the listeners are known (their addresses are its Meta).
	accounts := &actors.StoreAccounts{}
	sec, err := newSecurity(cfg, accounts, time.Now())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Address())
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Address(), err)
	}
	defer ln.Close()
	secure, err := listenSecure(cfg, sec)
	if err != nil {
		return err
	}
	defer secure.close()
	server, err := advertised(cfg, ln.Addr())
	if err != nil {
		return fmt.Errorf("bootstrap kubernetes service: %w", err)
	}
	// The kubernetes service's port 443 leads to the secure port when there is one
	// (in-cluster clients speak HTTPS with their service-account token), else to
	// the insecure one.
	apiServer := server
	if secure != nil {
		if apiServer, err = advertised(cfg, secure.ln.Addr()); err != nil {
			return fmt.Errorf("bootstrap kubernetes service: %w", err)
		}
	}

	claims, err := actors.Claims(nodes)
	if err != nil {
		return err
	}
	opts := persistence.Options{Dir: cfg.DataDir, ChangeLogWindow: cfg.ChangeLogWindow, NewObject: newObject, Claims: claims, ClaimResources: actors.ClaimResources}
	peer := &lateHandler{}
	actorAddr := ""
	if cfg.Clustered() {
		if actorAddr, err = actorAddress(cfg); err != nil {
			return err
		}
		meta := map[string]string{gateway.MetaAPI: "http://" + server.String(), metaActor: actorAddr,
			// what a member of a role needs to run the same admission in the actors it hosts
			metaAdmission: strings.Join(cfg.AdmissionControl, ","), metaAllowPrivileged: strconv.FormatBool(cfg.AllowPrivileged),
			metaPodCIDRs: podCIDRsMeta(nodes.PodCIDRs), metaPVRecycler: cfg.PVRecyclerImage}
		servicesMeta(services, meta)
		if secure != nil {
			if sa, err := advertised(cfg, secure.ln.Addr()); err == nil {
				meta[gateway.MetaSecureAPI] = "https://" + sa.String()
			}
		}
		opts.Replication = &persistence.Replication{Name: cfg.Name, PeerAddress: cfg.PeerAddress,
			InitialCluster: cfg.Cluster, Join: cfg.Join, Meta: meta, PeerHandler: peer,
			SnapshotThreshold: cfg.SnapshotCount, TrailingLogs: cfg.TrailingLogs, SnapshotInterval: cfg.SnapshotInterval}
		if et := cfg.RaftElectionTimeout(); et > 0 {
			// hashicorp/raft's follower timeout is etcd's election timeout; its leader
			// heartbeats every tenth of it and steps down after a lease as long.
			opts.Replication.HeartbeatTimeout, opts.Replication.ElectionTimeout = et, et
			opts.Replication.LeaderLeaseTimeout = et
		}
	}
	tOpen := time.Now()
	store, err := persistence.Open(opts)
	if err != nil {
		return fmt.Errorf("open store in %s: %w", cfg.DataDir, err)
	}
	opened := time.Since(tOpen)
	defer func() {
		if err := store.Close(); err != nil {
			log.WithError(err).Error("close store")
		}
	}()
	accounts.Store = store

	name := ""
	if cfg.Clustered() {
		name = cfg.Name
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
	gw, err := gateway.New(gateway.Config{Store: store, Name: name, Log: log, MaxBodyBytes: cfg.MaxRequestBodyBytes, Profiling: cfg.Profiling, TestHooks: cfg.EnableTestHooks,
		Authenticator: sec.authn, Authorizer: sec.authz, Tracer: tracer,
		SchedulerPolicy: cfg.SchedulerPolicy, NodeMonitoring: nodes.Config}) // explain: the scheduler's policy, the node controller's timing
	if err != nil {
		return fmt.Errorf("start gateway: %w", err)
	}
	peer.set(gw.PeerHandler())
	stopDNS, kubeDNS, dnsOK := startDNS(ctx, cfg, store, log)
	defer stopDNS()

	cp := &controlPlane{cfg: cfg, store: store, gw: gw, log: log, nodes: nodes, services: services, server: apiServer,
		serviceAccounts: sec.serviceAccountOptions(), tracer: tracer, actorAddr: actorAddr}
	if dnsOK {
		cp.kubeDNS = &kubeDNS
	}
	defer cp.stop()
	var started time.Duration
	if !store.Replicated() {
		<-store.Leadership() // a store of one leads from the start
		tStart := time.Now()
		if err := cp.start(ctx); err != nil {
			return err
		}
		started = time.Since(tStart)
	} else {
		go cp.follow(ctx, store.Leadership())
	}

	srv := &http.Server{Handler: gw.Handler()}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	secure.serve(gw.SecureHandler(), errc)
	addr := ln.Addr().String()
	// Where a (re)start's time went: opening the store (reading and decoding every
	// object and the change log) and starting the control plane (actors, bootstrap).
	fields := logrus.Fields{"address": addr, "secure-address": secure.address(), "data-dir": cfg.DataDir, "revision": store.Revision(),
		"store-open": opened.Round(time.Millisecond).String(), "control-plane-start": started.Round(time.Millisecond).String(),
		"start-total": time.Since(t0).Round(time.Millisecond).String()}
	if store.Replicated() {
		fields["name"], fields["peer-address"] = cfg.Name, cfg.PeerAddress
	}
	log.WithFields(fields).Info("serving")
	if ready != nil {
		ready(addr, secure)
	}
	if prof != nil {
		time.AfterFunc(cfg.StartupProfileAfter, func() {
			if err := prof.stop(); err != nil {
				log.WithError(err).Error("startup cpu profile")
			}
		})
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

// clusterOfOne makes a server without --initial-cluster or --join, run with
// --allow-members, the one voter of a new Raft cluster, its peer port on
// --peer-address or else a free loopback port (its Raft state keeps the cluster
// across restarts). The port chosen is kept in the data directory (peerAddressFile)
// and taken again at the next start: the members that joined (kube-scheduler,
// kube-controller-manager) know the server by the address in the Raft
// configuration, so they reach it again after a restart. Only when that port is
// taken by then does the server choose another, and those members must be
// restarted.
func clusterOfOne(cfg config.Server) (config.Server, error) {
	if cfg.PeerAddress == "" {
		addr, err := keptPeerAddress(filepath.Join(cfg.DataDir, peerAddressFile))
		if err != nil {
			return cfg, err
		}
		cfg.PeerAddress = addr
	}
	cfg.InitialCluster = cfg.Name + "=" + cfg.PeerAddress
	cfg.Cluster = map[string]string{cfg.Name: cfg.PeerAddress}
	return cfg, nil
}

// peerAddressFile, in the data directory, holds the peer address a server of one
// chose (clusterOfOne).
const peerAddressFile = "peer-address"

// keptPeerAddress is the address in file when its port is free now, else a free
// loopback port, written to file.
func keptPeerAddress(file string) (string, error) {
	if b, err := os.ReadFile(file); err == nil {
		addr := strings.TrimSpace(string(b))
		if ln, err := net.Listen("tcp", addr); err == nil {
			return addr, ln.Close()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("peer port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, []byte(addr+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("peer port: %w", err)
	}
	return addr, nil
}

// actorAddress is the replica's actor transport address: --actor-address, else the
// peer address's host with a port free now.
func actorAddress(cfg config.Server) (string, error) {
	if cfg.ActorAddress != "" {
		return cfg.ActorAddress, nil
	}
	host, _, err := net.SplitHostPort(cfg.PeerAddress)
	if err != nil {
		return "", fmt.Errorf("--peer-address %q: %w", cfg.PeerAddress, err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("actor transport: no free port on %s: %w", host, err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", err
	}
	return addr, nil
}

// newObject decodes stored objects: the store knows resources by name only.
func newObject(res string) (runtime.Object, error) {
	r, ok := kinds.Lookup(res)
	if !ok {
		return nil, fmt.Errorf("unknown resource %q", res)
	}
	return r.New(), nil
}
