package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/coreos/go-iptables/iptables"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Proxy modes.
const (
	ModeIPTables  = "iptables"
	ModeUserspace = "userspace"
)

// Config configures the service proxy.
type Config struct {
	Mode        string // ModeIPTables (default) or ModeUserspace
	NodeName    string
	NodeIP      string // userspace mode: the DNAT target of host traffic; found if empty
	ClusterCIDR string
	// SyncPeriod is the longest time between two syncs (default 5s).
	SyncPeriod time.Duration
	// MinSyncInterval is the shortest time between two syncs: changes inside it
	// are coalesced into one sync (default 200ms).
	MinSyncInterval time.Duration
	// BindAddress is where userspace proxy sockets listen (default 0.0.0.0).
	BindAddress string
	// UDPIdleTimeout ends a userspace UDP client's record (its socket to the chosen
	// endpoint) after this long without a datagram either way (default 30s).
	UDPIdleTimeout time.Duration
	// IPTablesPath overrides the iptables binary found in PATH. IPTablesRestorePath
	// (default: iptables-restore from PATH, when there is one) refills the changed
	// chains of a table with one iptables-restore --noflush: one atomic commit, and
	// much faster for thousands of rules; "-" writes each rule with go-iptables.
	IPTablesPath        string
	IPTablesRestorePath string
}

func (c Config) withDefaults() Config {
	if c.Mode == "" {
		c.Mode = ModeIPTables
	}
	if c.SyncPeriod <= 0 {
		c.SyncPeriod = 5 * time.Second
	}
	if c.MinSyncInterval <= 0 {
		c.MinSyncInterval = 200 * time.Millisecond
	}
	return c
}

// NewIPTablesApplier builds the applier of cfg: go-iptables on the configured or
// found iptables, with iptables-restore for bulk refills when configured.
func NewIPTablesApplier(cfg Config) (*Applier, error) {
	path := cfg.IPTablesPath
	if path == "" {
		path = "iptables"
	}
	ipt, err := iptables.New(iptables.Path(path))
	if err != nil {
		return nil, fmt.Errorf("proxy: iptables: %w", err)
	}
	restore := cfg.IPTablesRestorePath
	switch restore {
	case "-":
		restore = ""
	case "":
		if p, err := exec.LookPath("iptables-restore"); err == nil {
			restore = p
		}
	}
	return NewApplier(ipt, restore), nil
}

// routeLocalnet lets the kernel route packets to and from 127.0.0.0/8 after DNAT.
const routeLocalnet = "/proc/sys/net/ipv4/conf/all/route_localnet"

// Run watches services and endpoints and keeps the node's rules (and, in userspace
// mode, its proxy sockets) in step until ctx ends: a sync on every change (coalesced)
// and at least every SyncPeriod. Rules stay in place when it returns, so established
// and new connections keep working across an agent restart.
func Run(ctx context.Context, cfg Config, cs kubernetes.Interface, log logrus.FieldLogger) error {
	cfg = cfg.withDefaults()
	if cfg.Mode != ModeIPTables && cfg.Mode != ModeUserspace {
		return fmt.Errorf("proxy: unknown mode %q (want iptables or userspace)", cfg.Mode)
	}
	applier, err := NewIPTablesApplier(cfg)
	if err != nil {
		return err
	}
	node := NodeInfo{Name: cfg.NodeName, IP: cfg.NodeIP, ClusterCIDR: cfg.ClusterCIDR}
	if cfg.Mode == ModeIPTables {
		// NodePorts on localhost (the book's `curl localhost:30001`): the kernel
		// routes DNATed loopback traffic only with route_localnet, as kube-proxy sets.
		if err := os.WriteFile(routeLocalnet, []byte("1"), 0o644); err != nil {
			log.WithError(err).Warn("NodePorts will not answer on 127.0.0.1")
		}
	}
	var us *Userspace
	if cfg.Mode == ModeUserspace {
		if node.IP == "" {
			if node.IP, err = hostIP(); err != nil {
				return err
			}
		}
		us = NewUserspace(cfg.BindAddress, log)
		us.UDPIdleTimeout = cfg.UDPIdleTimeout
		defer us.Close()
	}

	factory := informers.NewSharedInformerFactory(cs, 0)
	svcInf := factory.Core().V1().Services()
	epInf := factory.Core().V1().Endpoints()
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}
	if _, err := svcInf.Informer().AddEventHandler(h); err != nil {
		return fmt.Errorf("proxy: watch services: %w", err)
	}
	if _, err := epInf.Informer().AddEventHandler(h); err != nil {
		return fmt.Errorf("proxy: watch endpoints: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), svcInf.Informer().HasSynced, epInf.Informer().HasSynced) {
		return ctx.Err()
	}
	log = log.WithFields(logrus.Fields{"mode": cfg.Mode, "node": cfg.NodeName})
	log.Info("service proxy started")
	// The node is marked as running the proxy until Run returns.
	actx, unmark := context.WithCancel(ctx)
	announced := make(chan struct{})
	go func() { defer close(announced); announce(actx, cs, cfg.NodeName, cfg.Mode, log) }()
	defer func() { unmark(); <-announced }()

	sync := func() {
		start := time.Now()
		svcs, err := svcInf.Lister().List(labels.Everything())
		if err != nil {
			log.WithError(err).Warn("list services failed")
			return
		}
		eps, err := epInf.Lister().List(labels.Everything())
		if err != nil {
			log.WithError(err).Warn("list endpoints failed")
			return
		}
		services := make([]corev1.Service, len(svcs))
		for i, s := range svcs {
			services[i] = *s
		}
		endpoints := make([]corev1.Endpoints, len(eps))
		for i, e := range eps {
			endpoints[i] = *e
		}
		var rs Ruleset
		if us != nil {
			ports, err := us.Update(services, endpoints)
			if err != nil {
				log.WithError(err).Warn("open proxy sockets failed")
			}
			rs = UserspaceRules(services, ports, node)
		} else {
			rs = IPTablesRules(services, endpoints, node)
		}
		st, err := applier.Apply(rs)
		if err != nil {
			log.WithError(err).Warn("apply rules failed")
			applier.Forget() // look at the kernel again next time
			return
		}
		if st.Changed() {
			log.WithFields(logrus.Fields{
				"services": len(services), "chainsWritten": st.ChainsWritten, "rules": st.RulesWritten,
				"chainsDeleted": st.ChainsDeleted, "took": time.Since(start).String(),
			}).Info("rules synced")
		}
	}

	ticker := time.NewTicker(cfg.SyncPeriod)
	defer ticker.Stop()
	var last time.Time
	for {
		if wait := cfg.MinSyncInterval - time.Since(last); wait > 0 && !last.IsZero() {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		last = time.Now()
		sync()
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-ticker.C:
		}
	}
}

// hostIP is the first global unicast IPv4 address of the node.
func hostIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("proxy: node addresses: %w", err)
	}
	var ips []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			ips = append(ips, n.IP.String())
		}
	}
	if len(ips) == 0 {
		return "", errors.New("proxy: no node IP found; set NodeIP")
	}
	sort.Strings(ips)
	return ips[0], nil
}
