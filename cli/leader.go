package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// controlPlane is the actor system (controllers, scheduler, object actors) of one
// replica: it runs while the replica leads (issue 13, step 1), and writes the
// bootstrap objects each time it starts.
type controlPlane struct {
	cfg      config.Server
	store    *persistence.Store
	gw       *gateway.Server
	log      *logrus.Logger
	nodes    actors.NodeOptions
	services actors.ServiceOptions
	server   netip.AddrPort // the kubernetes service's endpoint: this replica's API

	serviceAccounts *serviceaccount.Options // the service-account controllers' options
	tracer          *tracing.Tracer         // nil: no tracing
	kubeDNS         *netip.AddrPort         // the kube-dns service's endpoint, when this replica serves DNS

	// actorAddr is this replica's actor transport address (clustered only): the
	// control planes of the replicas are one actor cluster (actors/cluster.go).
	actorAddr string

	mu      sync.Mutex
	sys     *actors.System
	leading bool                 // sys is the leader's (every kind), not a follower's host
	members []actors.Member      // the last view of the live replicas
	leader  string               // and of the leader
	down    map[string]time.Time // non-voters unreachable since (reap)
}

// Replica Meta entries: the actor transport address; a member's role
// (kube-controller-manager, kube-scheduler: member.go); the server's admission
// plugins and --allow-privileged, which a member's hosted actors run too; the pod
// CIDRs the servers allocate (CIDR/mask, "" when none), which the store's claims
// depend on: every replica, a member's included, must check the same claims and
// allocate from the same ranges; the service cluster IP range, node port range
// and kube-dns address, which the services' actors of a kube-controller-manager
// allocate from; the recycler pods' image of the persistent volumes' actors.
const (
	metaActor           = "actor"
	metaRole            = "role"
	metaAdmission       = "admission-control"
	metaAllowPrivileged = "allow-privileged"
	metaPodCIDRs        = "pod-cidrs"
	metaServiceIPs      = "service-cluster-ip-range"
	metaNodePorts       = "service-node-port-range"
	metaClusterDNS      = "cluster-dns"
	metaPVRecycler      = "pv-recycler-image"
)

// reapAfter is how long a member with a role (a non-voter) may be unreachable
// before the leader removes it from the Raft configuration: a kube-scheduler killed
// with -9 does not remove itself, and a new one joins under a new name.
const reapAfter = 30 * time.Second

// actorMembers is the actor cluster's view from the store's members: the reachable
// voters (the servers) and the reachable members with a role, in the Raft
// configuration's order (the order they joined), and the leader's name.
func actorMembers(ms []persistence.Member) (live []actors.Member, leader string) {
	for _, m := range ms {
		if m.Leader {
			leader = m.Name
		}
		a, role := m.Meta[metaActor], m.Meta[metaRole]
		if m.Reachable && a != "" && (m.Voter || role != "") {
			live = append(live, actors.Member{Name: m.Name, Address: a, Role: role})
		}
	}
	return live, leader
}

// cluster is the actor-cluster part of a system's options: nil for a server of one.
func (cp *controlPlane) cluster(leader bool) *actors.ClusterOptions {
	if cp.actorAddr == "" {
		return nil
	}
	return &actors.ClusterOptions{Name: cp.cfg.Name, Address: cp.actorAddr, Leader: leader,
		Members: cp.members, LeaderName: cp.leader}
}

// start starts the actor system, gives it to the gateway and writes the bootstrap
// objects (namespaces, the kubernetes and kube-dns services). On an error nothing
// keeps running.
func (cp *controlPlane) start(ctx context.Context) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.sys != nil {
		return nil
	}
	// A new leader serves from its own state: wait until it has applied every
	// write committed before it led.
	if err := cp.store.ReadBarrier(ctx); err != nil {
		return fmt.Errorf("start control plane: read barrier: %w", err)
	}
	cfg := cp.cfg
	adm, err := actors.NewAdmission(cp.store, actors.AdmissionConfig{Plugins: cfg.AdmissionControl, AllowPrivileged: cfg.AllowPrivileged})
	if err != nil {
		return err
	}
	sys, err := actors.Start(actors.Options{Store: cp.store, Tracer: cp.tracer, Log: cp.log, RequestTimeout: cfg.RequestTimeout, EventTTL: cfg.EventTTL,
		Nodes: cp.nodes, Services: cp.services,
		Scheduler: true, SchedulerShards: cfg.SchedulerShards, SchedulerPolicy: cfg.SchedulerPolicy,
		Admission: adm.Chain, ResourceQuotaSyncPeriod: cfg.ResourceQuotaSyncPeriod,
		TerminatedPodGCThreshold: cfg.TerminatedPodGCThreshold, PVRecyclerImage: cfg.PVRecyclerImage, ServiceAccounts: cp.serviceAccounts,
		Cluster: cp.cluster(true)})
	if err != nil {
		return fmt.Errorf("start actors: %w", err)
	}
	adm.Bind(sys)
	cp.gw.SetActors(sys)
	fail := func(err error) error {
		cp.gw.SetActors(nil)
		sys.Stop()
		return err
	}
	if err := cp.gw.Bootstrap(ctx); err != nil {
		return fail(fmt.Errorf("bootstrap: %w", err))
	}
	if err := sys.EnsureKubernetesService(ctx, cp.server); err != nil {
		return fail(fmt.Errorf("bootstrap kubernetes service: %w", err))
	}
	if cp.kubeDNS != nil {
		if err := sys.EnsureKubeDNSService(ctx, *cp.kubeDNS); err != nil {
			cp.log.WithField("error", err).Error("bootstrap kube-dns service")
		}
	}
	cp.gw.Booted()
	cp.sys, cp.leading = sys, true
	return nil
}

// startHost starts a follower's actor system: its share of the placed kinds'
// actors (actors.PlacedKinds), which reach every other kind on the leader. The
// gateway does not use it (a follower forwards writes to the leader).
func (cp *controlPlane) startHost() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.sys != nil {
		return nil
	}
	cfg := cp.cfg
	adm, err := actors.NewAdmission(cp.store, actors.AdmissionConfig{Plugins: cfg.AdmissionControl, AllowPrivileged: cfg.AllowPrivileged})
	if err != nil {
		return err
	}
	sys, err := actors.Start(actors.Options{Store: cp.store, Tracer: cp.tracer, Log: cp.log, RequestTimeout: cfg.RequestTimeout,
		EventTTL: cfg.EventTTL, Nodes: cp.nodes, Services: cp.services, Admission: adm.Chain,
		ResourceQuotaSyncPeriod: cfg.ResourceQuotaSyncPeriod, Cluster: cp.cluster(false),
		ServiceAccounts: cp.serviceAccounts}) // the namespaces it hosts make their default account
	if err != nil {
		return fmt.Errorf("start actors: %w", err)
	}
	adm.Bind(sys)
	cp.sys, cp.leading = sys, false
	return nil
}

// stop stops the actor system, if it runs: the gateway forwards writes from now on.
func (cp *controlPlane) stop() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.sys == nil {
		return
	}
	if cp.leading {
		cp.gw.SetActors(nil)
	}
	cp.sys.Stop()
	cp.sys, cp.leading = nil, false
}

// refreshMembers reads the live replicas and the leader from the store and gives
// them to the running system.
func (cp *controlPlane) refreshMembers(ctx context.Context) {
	ms, err := cp.store.Members(ctx)
	if err != nil {
		return
	}
	live, leader := actorMembers(ms)
	if cp.store.IsLeader() {
		cp.reap(ctx, ms)
	}
	names := make([]string, len(live))
	for i, m := range live {
		names[i] = m.Name
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.members, cp.leader = live, leader
	if cp.sys != nil && len(live) > 0 {
		if err := cp.sys.SetMembers(live, leader); err != nil {
			cp.log.WithError(err).Warn("actor cluster members")
		}
	}
	cp.gw.SetActorMembers(names) // listed once the placement counts them
}

// reap removes the members with a role that have been unreachable for reapAfter.
func (cp *controlPlane) reap(ctx context.Context, ms []persistence.Member) {
	now := time.Now()
	cp.mu.Lock()
	if cp.down == nil {
		cp.down = map[string]time.Time{}
	}
	var gone []string
	seen := map[string]bool{}
	for _, m := range ms {
		if m.Voter { // the non-voters are the members with a role
			continue
		}
		seen[m.Name] = true
		if m.Reachable {
			delete(cp.down, m.Name)
			continue
		}
		since, ok := cp.down[m.Name]
		if !ok {
			cp.down[m.Name] = now
		} else if now.Sub(since) >= reapAfter {
			gone = append(gone, m.Name)
		}
	}
	for n := range cp.down {
		if !seen[n] {
			delete(cp.down, n)
		}
	}
	cp.mu.Unlock()
	for _, n := range gone {
		if err := cp.store.RemoveMember(ctx, n); err != nil {
			cp.log.WithError(err).WithField("member", n).Warn("remove an unreachable member")
			continue
		}
		cp.log.WithFields(logrus.Fields{"member": n, "unreachable-for": reapAfter}).Info("removed an unreachable member")
	}
}

// watchMembers refreshes the members every period until ctx ends.
func (cp *controlPlane) watchMembers(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			cp.refreshMembers(ctx)
		}
	}
}

// follow starts the control plane each time the replica becomes the leader and stops
// it each time it stops being it, until ctx ends. A failed start is retried while
// the replica still leads.
func (cp *controlPlane) follow(ctx context.Context, leadership <-chan bool) {
	var retry <-chan time.Time
	leading := false
	host := func() { // a follower hosts its share of the placed kinds' actors
		if cp.actorAddr == "" {
			return
		}
		if err := cp.startHost(); err != nil {
			cp.log.WithField("error", err).Error("follower's actors did not start")
		}
	}
	if cp.actorAddr != "" {
		cp.refreshMembers(ctx)
		go cp.watchMembers(ctx, 500*time.Millisecond)
		host()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case l, ok := <-leadership:
			if !ok {
				return
			}
			leading, retry = l, nil
			if !l {
				cp.log.WithField("name", cp.cfg.Name).Info("no longer the leader: stopping the control plane")
				cp.stop()
				host()
				continue
			}
			cp.stop()              // the follower's host, if it runs
			cp.refreshMembers(ctx) // the new leader's system starts with the members as they are now
		case <-retry:
			retry = nil
			if !leading || !cp.store.IsLeader() {
				continue
			}
		}
		if !leading {
			continue
		}
		cp.log.WithField("name", cp.cfg.Name).Info("leader: starting the control plane")
		if err := cp.start(ctx); err != nil {
			cp.log.WithField("error", err).Error("control plane did not start; retrying")
			retry = time.After(time.Second)
		}
	}
}

// lateHandler is the store's peer handler, given before the gateway that serves it
// exists; until then it answers 503.
type lateHandler struct{ h atomic.Pointer[http.Handler] }

func (l *lateHandler) set(h http.Handler) { l.h.Store(&h) }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := l.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, "starting", http.StatusServiceUnavailable)
}
