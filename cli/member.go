package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/scheduler"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/gateway/authn"
	"github.com/kubeactor/kubeactor/persistence"
)

// kube-controller-manager and kube-scheduler (the binary under those names) with
// --master join the control plane's actor cluster (actors/cluster.go) as members
// with a role: the store of each is a Raft non-voter of the servers' store, joined
// through the peer address the members API gives, and its actor system hosts only
// its role's actors (RoleControllers: every controller Kubernetes 1.0's
// kube-controller-manager runs: replication controllers, namespaces, services and
// their endpoints, nodes and the evictor, resource quotas, service accounts and
// their tokens, persistent volumes and claims, and the terminated-pod collector;
// RoleScheduler: the scheduler). While the member lives, the servers host none of
// them; when it dies they take them back; a second member of a role is a standby.
// What the servers decide for the whole cluster (the admission plugins, the pod
// CIDRs, the service address ranges, the recycler image) a member learns from their
// Meta, never from flags of its own. Without --master they only check their flags
// and say where their work runs (insideAPIServer).

// memberCommon are the flags of both members.
type memberCommon struct {
	config.Logging
	config.Glog
	Master       string        `name:"master" help:"kube-apiserver's URL: join its control plane as a member that hosts this component's actors. Without it the command only checks its flags (the actors run inside kube-apiserver)."`
	Name         string        `name:"name" help:"This member's name, unique in the cluster (default: <component>-<host>-<pid>)."`
	PeerAddress  string        `name:"peer-address" help:"host:port of this member's peer port (Raft; the servers must reach it). Default: the address this host reaches the server's peer port from, with a free port."`
	ActorAddress string        `name:"actor-address" help:"host:port of this member's actor transport. Default: the --peer-address host with a free port."`
	DataDir      string        `name:"data-dir" help:"Directory of this member's copy of the store (default: a new temporary one, removed at exit)."`
	JoinTimeout  time.Duration `name:"join-timeout" default:"60s" help:"How long to wait for kube-apiserver to answer and let this member join."`
}

func (m *memberCommon) common() *memberCommon { return m }

// schedulerFlags are kube-scheduler's.
type schedulerFlags struct {
	memberCommon
	PolicyConfigFile string `name:"policy-config-file" help:"Scheduler policy file (JSON: predicates and weighted priorities, as v1.0's); default: the default provider."`
}

// controllerManagerFlags are kube-controller-manager's.
type controllerManagerFlags struct {
	memberCommon
	config.NodeController
	TerminatedPodGCThreshold     int           `name:"terminated-pod-gc-threshold" default:"12500" help:"Terminated pods (Succeeded or Failed) kept before the oldest are deleted, every 20s; 0 or less keeps them all."`
	ResourceQuotaSyncPeriod      time.Duration `name:"resource-quota-sync-period" default:"10s" help:"How often each resource quota recounts its usage (it also recounts when what it counts changes)."`
	ServiceAccountPrivateKeyFile string        `name:"service-account-private-key-file" help:"PEM private key (RSA or EC) that signs service-account tokens; it must match kube-apiserver's --service-account-key-file (by default its serving key). Without it the service accounts get no token secrets while this member hosts them (as Kubernetes 1.0 ran no token controller)."`
	RootCAFile                   string        `name:"root-ca-file" help:"CA certificate (PEM) put in service-account token secrets as ca.crt."`
}

// memberSpec is what a member runs, from its flags.
type memberSpec struct {
	prog, role string
	common     *memberCommon
	policy     []byte // kube-scheduler's --policy-config-file content
	// kube-controller-manager's: --terminated-pod-gc-threshold, the node
	// controller's flags, --resource-quota-sync-period, and the token controller's
	// options (from --service-account-private-key-file and --root-ca-file).
	podGC     int
	nodes     config.NodeController
	quotaSync time.Duration
	accounts  *serviceaccount.Options
}

// parseMember parses a member's command line (book flags with no effect are taken
// out with a warning each). exit >= 0: the parser already answered (--help).
func parseMember(prog string, args []string, stdout, stderr io.Writer) (spec memberSpec, warns []config.Warning, exit int, err error) {
	var sf schedulerFlags
	var cf controllerManagerFlags
	var flags interface{ common() *memberCommon }
	role, what := actors.RoleControllers, "the controllers (replication, endpoints, node, resource quota, namespace, service account and token, persistent volume)"
	if prog == config.Scheduler {
		flags, role, what = &sf, actors.RoleScheduler, "the scheduler"
	} else {
		flags = &cf
	}
	exit = -1
	parser, err := kong.New(flags, kong.Name(prog),
		kong.Description(prog+" with --master joins kube-apiserver's control plane as a member that hosts "+what+"; without it, it checks its flags and exits (they run inside kube-apiserver)."),
		kong.UsageOnError(), kong.Writers(stdout, stderr), kong.Exit(func(code int) { exit = code }))
	if err != nil {
		return spec, nil, 2, err
	}
	known := commandFlags(parser.Model, "")
	rest, warns := config.BookArgs(prog, normalizeFlags(args), func(n string) bool { return known[n] })
	if _, err = parser.Parse(rest); exit >= 0 || err != nil {
		return spec, warns, exit, err
	}
	spec = memberSpec{prog: prog, role: role, common: flags.common(), podGC: cf.TerminatedPodGCThreshold,
		nodes: cf.NodeController, quotaSync: cf.ResourceQuotaSyncPeriod}
	if role == actors.RoleControllers {
		if err := cf.NodeController.Validate(); err != nil {
			return spec, warns, -1, err
		}
		if cf.ResourceQuotaSyncPeriod < 0 {
			return spec, warns, -1, fmt.Errorf("--resource-quota-sync-period %s: must not be negative", cf.ResourceQuotaSyncPeriod)
		}
		if spec.accounts, err = tokenOptions(cf.ServiceAccountPrivateKeyFile, cf.RootCAFile); err != nil {
			return spec, warns, -1, err
		}
	}
	if sf.PolicyConfigFile != "" {
		data, err := os.ReadFile(sf.PolicyConfigFile)
		if err != nil {
			return spec, warns, -1, fmt.Errorf("--policy-config-file: %w", err)
		}
		if _, err := scheduler.ParsePolicy(data); err != nil {
			return spec, warns, -1, fmt.Errorf("--policy-config-file %s: %w", sf.PolicyConfigFile, err)
		}
		spec.policy = data
	}
	return spec, warns, -1, nil
}

// tokenOptions are the token controller's options from kube-controller-manager's
// --service-account-private-key-file (none: no tokens) and --root-ca-file.
func tokenOptions(keyFile, caFile string) (*serviceaccount.Options, error) {
	opts := &serviceaccount.Options{}
	if keyFile != "" {
		data, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("--service-account-private-key-file: %w", err)
		}
		key, err := authn.ParsePrivateKey(data)
		if err != nil {
			return nil, fmt.Errorf("--service-account-private-key-file %s: %w", keyFile, err)
		}
		signer, err := authn.NewTokenSigner(key)
		if err != nil {
			return nil, fmt.Errorf("--service-account-private-key-file %s: %w", keyFile, err)
		}
		opts.Tokens = signer
	}
	if caFile != "" {
		data, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--root-ca-file: %w", err)
		}
		opts.RootCA = data
	}
	return opts, nil
}

// bookMember runs kube-controller-manager or kube-scheduler; it returns the exit code.
func bookMember(prog string, args []string, stdout, stderr io.Writer) int {
	spec, warns, exit, err := parseMember(prog, args, stdout, stderr)
	if exit >= 0 {
		return exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	if spec.common.PrintVersion {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	if spec.common.Master == "" {
		return insideAPIServer(prog, args, stdout, stderr)
	}
	log, done, err := glogLogger(spec.common.Logging, spec.common.Glog, prog, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	defer done()
	logWarnings(log, prog, warns)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runMember(ctx, spec, log); err != nil {
		log.WithError(err).Error(prog + " stopped")
		return 1
	}
	return 0
}

// masterPeer asks the members API at master for the servers' peer address (the
// leader's when known) and the Meta of that server, retrying until timeout.
func masterPeer(ctx context.Context, master string, timeout time.Duration) (string, map[string]string, error) {
	url := strings.TrimSuffix(master, "/") + "/kubeactor/v1/members"
	deadline := time.Now().Add(timeout)
	var last error
	for {
		peer, meta, err := fetchPeer(ctx, url)
		if err == nil || errors.Is(err, errNoRaft) {
			return peer, meta, err
		}
		last = err
		if time.Now().After(deadline) {
			return "", nil, fmt.Errorf("%s: %w", url, last)
		}
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

var errNoRaft = errors.New("kube-apiserver runs its store without Raft, so no member can join: run it as kube-apiserver, or `kubeactor server --allow-members`")

func fetchPeer(ctx context.Context, url string) (string, map[string]string, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return "", nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	var list gateway.MemberList
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return "", nil, err
	}
	var peer string
	var meta map[string]string
	for _, m := range list.Items {
		if m.PeerAddress == "" || m.Meta[metaRole] != "" || m.Role == "learner" {
			continue
		}
		if peer == "" || m.Role == "leader" {
			peer, meta = m.PeerAddress, m.Meta
		}
	}
	if peer == "" {
		if len(list.Items) > 0 && list.Items[0].PeerAddress == "" {
			return "", nil, errNoRaft
		}
		return "", nil, errors.New("no server listed yet")
	}
	return peer, meta, nil
}

// freeAddrOn is host with a port free now.
func freeAddrOn(host string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// localHostFor is the address of this host from which peer is reached.
func localHostFor(peer string) string {
	c, err := net.Dial("udp", peer)
	if err != nil {
		return "127.0.0.1"
	}
	defer c.Close()
	host, _, err := net.SplitHostPort(c.LocalAddr().String())
	if err != nil {
		return "127.0.0.1"
	}
	return host
}

var notName = regexp.MustCompile(`[^a-z0-9.-]+`)

// memberName is the default name: <component>-<host>-<pid>, a new one each start
// (the leader removes a dead member after reapAfter).
func memberName(prog string) string {
	host, _ := os.Hostname()
	host = strings.Trim(notName.ReplaceAllString(strings.ToLower(host), "-"), "-.")
	if host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s-%s-%d", prog, host, os.Getpid())
}

// runMember joins the cluster and hosts the role's actors until ctx ends.
func runMember(ctx context.Context, spec memberSpec, log *logrus.Logger) error {
	c := spec.common
	peer, meta, err := masterPeer(ctx, c.Master, c.JoinTimeout)
	if err != nil {
		return err
	}
	name := c.Name
	if name == "" {
		name = memberName(spec.prog)
	}
	host := localHostFor(peer)
	peerAddr, actorAddr := c.PeerAddress, c.ActorAddress
	if peerAddr == "" {
		if peerAddr, err = freeAddrOn(host); err != nil {
			return fmt.Errorf("peer port: %w", err)
		}
	}
	if actorAddr == "" {
		ph, _, err := net.SplitHostPort(peerAddr)
		if err != nil {
			return fmt.Errorf("--peer-address %q: %w", peerAddr, err)
		}
		if actorAddr, err = freeAddrOn(ph); err != nil {
			return fmt.Errorf("actor transport: %w", err)
		}
	}
	dir := c.DataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", spec.prog+"-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	// The store checks the same claims as the servers' (persistence/claims.go):
	// they depend on the pod CIDRs the servers allocate.
	cidrs, err := podCIDRsFromMeta(meta[metaPodCIDRs])
	if err != nil {
		return err
	}
	claims, err := actors.Claims(actors.NodeOptions{PodCIDRs: cidrs})
	if err != nil {
		return err
	}
	store, err := persistence.Open(persistence.Options{Dir: dir, NewObject: newObject, Claims: claims, ClaimResources: actors.ClaimResources, Replication: &persistence.Replication{
		Name: name, PeerAddress: peerAddr, Join: "http://" + peer, NonVoter: true,
		Meta: map[string]string{metaActor: actorAddr, metaRole: spec.role}}})
	if err != nil {
		return fmt.Errorf("join the control plane at %s: %w", peer, err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.WithError(err).Error("close store")
		}
	}()
	// Leave the Raft configuration on a clean stop: the servers take the actors back
	// at once (after a kill -9 they do when they find the member unreachable, and
	// the leader removes it after reapAfter).
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := store.RemoveMember(rctx, name); err != nil {
			log.WithError(err).Warn("leave the cluster")
		}
	}()
	if err := waitStoreReady(ctx, store, c.JoinTimeout); err != nil {
		return err
	}
	// A controllers member hosts the node and service actors: their managers
	// allocate pod CIDRs and service addresses from the servers' ranges.
	var nodes actors.NodeOptions
	var services actors.ServiceOptions
	if spec.role == actors.RoleControllers {
		nodes = nodeControllerOptions(spec.nodes)
		nodes.PodCIDRs = cidrs
		if services, err = servicesFromMeta(meta); err != nil {
			return err
		}
		if spec.accounts.Tokens == nil {
			log.Warn("no --service-account-private-key-file: the service accounts get no token secrets while this member hosts them")
		}
	}
	allow, _ := strconv.ParseBool(meta[metaAllowPrivileged])
	var plugins []string
	if a := meta[metaAdmission]; a != "" {
		plugins = strings.Split(a, ",")
	}
	adm, err := actors.NewAdmission(store, actors.AdmissionConfig{Plugins: plugins, AllowPrivileged: allow})
	if err != nil {
		return err
	}
	ms, err := store.Members(ctx)
	if err != nil {
		return err
	}
	live, leader := actorMembers(ms)
	sys, err := actors.Start(actors.Options{Store: store, Log: log, Admission: adm.Chain,
		Scheduler: spec.role == actors.RoleScheduler, SchedulerShards: 1, SchedulerPolicy: spec.policy,
		TerminatedPodGCThreshold: spec.podGC, Nodes: nodes, Services: services, ServiceAccounts: spec.accounts,
		ResourceQuotaSyncPeriod: spec.quotaSync, PVRecyclerImage: meta[metaPVRecycler],
		Cluster: &actors.ClusterOptions{Name: name, Address: actorAddr, Role: spec.role, Members: live, LeaderName: leader}})
	if err != nil {
		return fmt.Errorf("start actors: %w", err)
	}
	defer sys.Stop()
	adm.Bind(sys)
	log.WithFields(logrus.Fields{"name": name, "role": spec.role, "peer-address": peerAddr, "actor-address": actorAddr,
		"joined": peer, "data-dir": dir}).Info("member of the control plane")
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			log.Info("shutting down")
			return nil
		case <-t.C:
			ms, err := store.Members(ctx)
			if err != nil {
				continue
			}
			live, leader := actorMembers(ms)
			if len(live) > 0 {
				if err := sys.SetMembers(live, leader); err != nil {
					log.WithError(err).Warn("actor cluster members")
				}
			}
		}
	}
}

// waitStoreReady waits until the member's store knows a leader and has applied what
// it learned was committed (its first snapshot or log).
func waitStoreReady(ctx context.Context, store *persistence.Store, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !store.Ready() {
		if time.Now().After(deadline) {
			return errors.New("the store did not catch up with the servers' in time")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
