package cli

import (
	"context"
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

	"github.com/alecthomas/kong"
	"github.com/sirupsen/logrus"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
	"github.com/kubeactor/kubeactor/nodeagent/kubelet"
	"github.com/kubeactor/kubeactor/nodeagent/metrics"
	"github.com/kubeactor/kubeactor/nodeagent/proxy"
	"github.com/kubeactor/kubeactor/nodeagent/runtime/docker"
	"github.com/kubeactor/kubeactor/nodeagent/server"
	"github.com/kubeactor/kubeactor/nodeagent/sim"
	"github.com/kubeactor/kubeactor/nodeagent/spans"
	"github.com/kubeactor/kubeactor/nodeagent/stats"
)

// agentCmd is the node agent; config.Agent's Validate runs while parsing.
type agentCmd struct {
	config.Agent
}

func (c *agentCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.Simulate == 0 {
		return runDocker(ctx, c.Agent, g.log)
	}
	return simulate(ctx, c.Agent, g.log)
}

// runDocker runs the Docker node agent and its HTTP server until ctx ends.
func runDocker(ctx context.Context, c config.Agent, log *logrus.Logger) error {
	rt, err := docker.New()
	if err != nil {
		return fmt.Errorf("%w: %v", kubelet.ErrNoEngine, err)
	}
	defer rt.Close()
	if _, err := kubelet.CheckEngine(ctx, rt, c.PodInfraContainerImage, log); err != nil {
		return err // before listening on the agent's port
	}
	cfg, err := dockerAgentConfig(c)
	if err != nil {
		return err
	}
	client, err := apiclient.New(apiclient.Options{
		Server:     c.APIServer(),
		Kubeconfig: c.Kubeconfig,
		QPS:        c.KubeAPIQPS,
		Burst:      c.KubeAPIBurst,
		MaxConns:   8,
		UserAgent:  "kubeactor-agent/" + Version,
		Trace:      c.Tracing,
	})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if c.Tracing {
		hc, server, err := client.HTTPClient()
		if err != nil {
			return err
		}
		tracer, err := spans.New(spans.Options{Sampling: c.TraceSampling, Node: cfg.NodeName, Server: server, Client: hc,
			Log: log.WithField("node", cfg.NodeName)})
		if err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := tracer.Shutdown(sctx); err != nil {
				log.WithError(err).Debug("flush spans")
			}
		}()
		cfg.Tracer = tracer
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Address, strconv.Itoa(c.Port)))
	if err != nil {
		return fmt.Errorf("agent server: listen: %w", err)
	}
	cfg.DaemonPort = int32(ln.Addr().(*net.TCPAddr).Port)
	cfg.Metrics = metrics.New()
	agent := kubelet.New(cfg, client, rt, log.WithField("node", cfg.NodeName))
	if c.ProxyMode != "none" {
		pcfg := proxy.Config{Mode: c.ProxyMode, NodeName: cfg.NodeName, NodeIP: cfg.NodeIP, ClusterCIDR: c.ClusterCIDR}
		go func() {
			if err := proxy.Run(ctx, pcfg, client.Clientset(), log.WithField("component", "proxy")); err != nil && ctx.Err() == nil {
				log.WithError(err).Error("service proxy stopped")
			}
		}()
	}
	collector := &stats.Collector{NodeName: cfg.NodeName, Engine: rt, Pods: agent.Host(), Log: log.WithField("node", cfg.NodeName)}
	go collector.Run(ctx)
	srv := server.New(server.Config{NodeName: cfg.NodeName, Runtime: rt, Host: agent.Host(), Log: log, Metrics: cfg.Metrics.Handler(), Summary: collector})
	servers := []struct {
		what    string
		addr    string
		port    int
		handler http.Handler
	}{
		{"agent", c.Address, c.Port, srv.Handler()},
		{"read-only", c.Address, c.ReadOnlyPort, srv.ReadOnlyHandler()},
		{"healthz", c.HealthzBindAddress, c.HealthzPort, server.HealthzHandler()},
	}
	for i, sv := range servers {
		l := ln
		if i > 0 {
			if sv.port == 0 {
				continue // off
			}
			if l, err = net.Listen("tcp", net.JoinHostPort(sv.addr, strconv.Itoa(sv.port))); err != nil {
				return fmt.Errorf("%s server: listen: %w", sv.what, err)
			}
		}
		httpSrv := &http.Server{Handler: sv.handler, ReadHeaderTimeout: 30 * time.Second}
		go func() { _ = httpSrv.Serve(l) }()
		defer httpSrv.Close()
		log.WithFields(logrus.Fields{"node": cfg.NodeName, "server": sv.what, "address": l.Addr().String()}).Info("server listening")
	}
	return agent.Run(ctx)
}

// dockerPreflight checks that the engine answers and holds the pod infra image,
// building it from this binary when it is missing.
func dockerPreflight(ctx context.Context, c config.Agent, log logrus.FieldLogger) error {
	rt, err := docker.New()
	if err != nil {
		return fmt.Errorf("%w: %v", kubelet.ErrNoEngine, err)
	}
	defer rt.Close()
	_, err = kubelet.CheckEngine(ctx, rt, c.PodInfraContainerImage, log)
	return err
}

// dockerAgentConfig resolves the Docker agent's defaults: the node name from the
// hostname, the node IP from the interfaces, the root dir under the home directory.
func dockerAgentConfig(c config.Agent) (kubelet.Config, error) {
	hostname, err := os.Hostname()
	if err != nil {
		return kubelet.Config{}, err
	}
	name := c.NodeName
	if name == "" {
		name = strings.ToLower(hostname)
	}
	ip := c.NodeIP
	if ip == "" {
		addr, err := kubelet.DefaultNodeIP()
		if err != nil {
			return kubelet.Config{}, err
		}
		ip = addr.String()
	}
	root := c.RootDir
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return kubelet.Config{}, fmt.Errorf("--root-dir: %w", err)
		}
		root = filepath.Join(home, ".kubeactor", "agent")
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return kubelet.Config{}, err
	}
	return kubelet.Config{
		NodeName:            name,
		NodeIP:              ip,
		Hostname:            hostname,
		PauseImage:          c.PodInfraContainerImage,
		RootDir:             root,
		SyncFrequency:       c.SyncFrequency,
		StatusFrequency:     c.NodeStatusUpdateFrequency,
		MaxPods:             c.MaxPods,
		MaxDeadPerContainer: c.MaxDeadContainersPerContainer,
		MaxDead:             c.MaxDeadContainers,
		ManifestPath:        c.PodManifestPath,
		FileCheckFrequency:  c.FileCheckFrequency,
		ClusterDNS:          c.ClusterDNS,
		ClusterDomain:       c.ClusterDomain,
		Network:             c.DockerNetwork,
		Version:             "v1.0.0-kubeactor",
		GCPeriod:            c.GCPeriod,
		MinGCAge:            c.MinimumContainerTTL,
		NetworkPlugin:       map[string]string{"docker": "", "bridge": kubelet.NetworkBridge}[c.NetworkPlugin],
		BridgeName:          c.BridgeName,
		ClusterCIDR:         c.ClusterCIDR,
		NoRegister:          !c.RegisterNode,
		ManifestURL:         c.ManifestURL,
		HTTPCheckFrequency:  c.HTTPCheckFrequency,
		ImageGC:             &kubelet.ImageGCPolicy{High: c.ImageGCHighThreshold, Low: c.ImageGCLowThreshold, MinAge: c.MinimumImageTTL, Scope: c.ImageGCScope},
	}, nil
}

// simulate runs c.Simulate simulated nodes against c.Server until ctx ends.
func simulate(ctx context.Context, c config.Agent, log *logrus.Logger) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(c.CapacityCPU), // validated
		corev1.ResourceMemory: resource.MustParse(c.CapacityMemory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(c.MaxPods), resource.DecimalSI),
	}
	client, err := apiclient.New(apiclient.Options{
		Server:     c.APIServer(),
		Kubeconfig: c.Kubeconfig,
		QPS:        c.KubeAPIQPS,
		Burst:      c.KubeAPIBurst,
		MaxConns:   c.Workers,
		UserAgent:  "kubeactor-agent/" + Version,
	})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	// The heartbeats' own client: every kubelet posts its status apart, so they do
	// not queue behind the pods' status writes for the shared rate limit. They are
	// paced by their period, not by a limit.
	writers := sim.HeartbeatWriters(c.Simulate, c.Workers, c.NodeStatusUpdateFrequency)
	beats, err := apiclient.New(apiclient.Options{
		Server:     c.APIServer(),
		Kubeconfig: c.Kubeconfig,
		QPS:        -1,
		MaxConns:   writers,
		UserAgent:  "kubeactor-agent/" + Version,
	})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	m := metrics.New()
	// The simulator's own server on --port: the nodes' /stats/summary (each node at
	// its loopback InternalIP) and healthz. A port already taken is a warning: the
	// nodes then report no daemon port and `kubectl top` leaves them out.
	var daemonPort int32
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Address, strconv.Itoa(c.Port)))
	if err != nil {
		log.WithError(err).WithField("port", c.Port).Warn("simulated nodes' server not served")
	} else {
		defer ln.Close()
		daemonPort = int32(ln.Addr().(*net.TCPAddr).Port)
	}
	s, err := sim.New(sim.Config{
		Nodes:           c.Simulate,
		NamePrefix:      c.NamePrefix,
		StatusFrequency: c.NodeStatusUpdateFrequency,
		Capacity:        capacity,
		KubeletVersion:  "v1.0.0-kubeactor",
		Workers:         c.Workers,
		StatsEvery:      c.StatsInterval,
		Metrics:         m,
		DaemonPort:      daemonPort,
		Beats:           beats,
	}, client, log)
	if err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	if ln != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /stats/summary", s.StatsHandler())
		mux.Handle("GET /healthz", server.HealthzHandler())
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		log.WithFields(logrus.Fields{"server": "agent", "address": ln.Addr().String()}).Info("server listening")
	}
	if c.ReadOnlyPort != 0 {
		defer serveSimulatorMetrics(c, m, s.StatsHandler(), log)()
	}
	return s.Run(ctx)
}

// serveSimulatorMetrics serves the simulator's /metrics, /stats/summary and /healthz
// on the read-only port until the returned func is called. Simulators often share a machine (several
// in one test): a port already taken is a warning, not a failure.
func serveSimulatorMetrics(c config.Agent, m *metrics.Agent, stats http.Handler, log *logrus.Logger) func() {
	addr := net.JoinHostPort(c.Address, strconv.Itoa(c.ReadOnlyPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.WithError(err).WithField("address", addr).Warn("simulator metrics not served")
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle("GET /stats/summary", stats)
	mux.Handle("GET /healthz", server.HealthzHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.WithFields(logrus.Fields{"server": "read-only", "address": ln.Addr().String()}).Info("server listening")
	return func() { _ = srv.Close() }
}

// defaultAgent is the agent configuration with every flag at its default.
func defaultAgent() (config.Agent, error) {
	var a config.Agent
	parser, err := kong.New(&a)
	if err != nil {
		return a, err
	}
	_, err = parser.Parse(nil)
	return a, err
}
