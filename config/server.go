package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/scheduler"
)

// Server configures `kubeactor server`: the store, the actor system and the gateway.
// Flag names follow the book's kube-apiserver; `_` is accepted for `-` everywhere.
type Server struct {
	DataDir             string        `name:"data-dir" env:"KUBEACTOR_DATA_DIR" help:"Directory of the Pebble store (default: ~/.kubeactor/data)."`
	InsecureBindAddress string        `name:"insecure-bind-address" default:"127.0.0.1" help:"IP address on which to serve the insecure port (0.0.0.0 for all interfaces)."`
	InsecurePort        int           `name:"insecure-port" default:"8080" help:"Port of the unauthenticated API."`
	ChangeLogWindow     int64         `name:"change-log-window" default:"100000" help:"Revisions kept in the change log; watches older than that get 410 Gone."`
	RequestTimeout      time.Duration `name:"request-timeout" default:"30s" help:"How long a write waits for its owning actor."`
	MaxRequestBodyBytes int64         `name:"max-request-body-bytes" default:"3145728" help:"Largest accepted request body; larger bodies get 413."`
	ShutdownGracePeriod time.Duration `name:"shutdown-grace-period" default:"5s" help:"How long to drain requests on SIGTERM."`
	Profiling           bool          `name:"profiling" default:"true" negatable:"" help:"Serve Go profiles at /debug/pprof/ (the book's --profiling)."`
	EnableTestHooks     bool          `name:"enable-test-hooks" hidden:"" help:"Serve test hooks (POST /debug/kubeactor/panic). For tests only."`
	StartupCPUProfile   string        `name:"startup-cpu-profile" hidden:"" help:"Write a CPU profile of the start to this file: from exec until --startup-cpu-profile-after past the moment the API is served. For measuring restarts."`
	StartupProfileAfter time.Duration `name:"startup-cpu-profile-after" hidden:"" default:"5s" help:"How long --startup-cpu-profile goes on once the API is served (feeds catching up, first requests)."`
	EventTTL            time.Duration `name:"event-ttl" default:"1h" help:"How long an event is kept after it was last seen."`
	// ResourceQuotaSyncPeriod is the book's controller-manager flag.
	ResourceQuotaSyncPeriod time.Duration `name:"resource-quota-sync-period" default:"10s" help:"How often each resource quota recounts its usage (it also recounts when what it counts changes)."`
	// TerminatedPodGCThreshold is the book's controller-manager flag.
	TerminatedPodGCThreshold int `name:"terminated-pod-gc-threshold" default:"12500" help:"Terminated pods (Succeeded or Failed) kept before the oldest are deleted, every 20s; 0 or less keeps them all."`
	// PVRecyclerImage is the image of the persistent volumes' recycler pods.
	PVRecyclerImage string `name:"pv-recycler-image" default:"kubeactor/pause:latest" help:"Image of the pods that scrub a released Recycle volume and delete a released Delete hostPath volume's directory: the nodes' --pod-infra-container-image, whose /pause has the scrub and delete modes (empty: the default)."`
	// The node controller (the book's controller-manager flags) and the service
	// addresses (the apiserver's).
	NodeController
	ServiceClusterIPRange string `name:"service-cluster-ip-range" default:"10.254.0.0/16" help:"CIDR from which service cluster IPs are allocated."`
	ServiceNodePortRange  string `name:"service-node-port-range" default:"30000-32767" help:"Port range from which NodePort services' ports are allocated."`
	AdvertiseAddress      string `name:"advertise-address" help:"IP address the kubernetes service's endpoints point at (default: --insecure-bind-address, or the first non-loopback address when that is 0.0.0.0)."`
	// The memory policy (internal/memory): how far the heap may grow past the live heap.
	GCPercent        int    `name:"gc-percent" default:"400" help:"Most the heap may grow past the live heap before a collection, in percent of it (GOGC); a small server collects this seldom. The GOGC environment variable wins when set (and turns --gc-headroom off)."`
	GCHeadroom       string `name:"gc-headroom" default:"256Mi" help:"Bytes the heap may grow past the live heap before a collection, within --gc-min-percent and --gc-percent of it: the server's memory is its live heap plus about this much. 0 turns it off (always --gc-percent)."`
	GCMinPercent     int    `name:"gc-min-percent" default:"40" help:"Least the heap may grow past the live heap before a collection, in percent of it: a large live heap is not collected more often than this (the collector's CPU falls as this rises, the memory grows)."`
	MemoryLimit      string `name:"memory-limit" default:"0" help:"Soft limit on the server's Go memory (e.g. 4Gi): collections run more often as it comes near. 0 for none; the GOMEMLIMIT environment variable wins when set."`
	PolicyConfigFile string `name:"policy-config-file" help:"Scheduler policy file (JSON: predicates and weighted priorities, as v1.0's); default: the default provider."`
	SchedulerShards  int    `name:"scheduler-shards" default:"1" help:"Shard actors bidding nodes in parallel. Bids are cached per pod class, so a round is little work and each extra shard adds a message hop to it: one is fastest on small machines (0 means 1)."`
	// Cluster DNS, served by the server itself (gateway/dns), and pod CIDRs.
	ClusterDNS        string `name:"cluster-dns" default:"10.254.0.10" help:"Cluster IP of the kube-system/kube-dns service; must be in --service-cluster-ip-range."`
	ClusterDomain     string `name:"cluster-domain" default:"cluster.local" help:"Domain of the cluster's DNS names (<svc>.<ns>.svc.<domain>)."`
	DNSBindAddress    string `name:"dns-bind-address" help:"IP address the DNS server listens on, UDP and TCP (default: --insecure-bind-address)."`
	DNSPort           int    `name:"dns-port" default:"53" help:"Port of the DNS server (0 disables it and the kube-dns service)."`
	AllocateNodeCIDRs bool   `name:"allocate-node-cidrs" default:"true" negatable:"" help:"Give each node without a spec.podCIDR a subnet of --cluster-cidr."`
	ClusterCIDR       string `name:"cluster-cidr" default:"10.244.0.0/16" help:"CIDR from which the nodes' pod CIDRs are allocated."`
	NodeCIDRMaskSize  int    `name:"node-cidr-mask-size" default:"24" help:"Prefix length of each node's pod CIDR."`
	// Admission (the book's kube-apiserver flags).
	AdmissionControl []string `name:"admission-control" default:"NamespaceLifecycle,ResourceQuota" sep:"," help:"Admission plugins, in the order they run, comma-separated (the book's --admission_control): AlwaysAdmit, AlwaysDeny, DenyExecOnPrivileged, LimitRanger, NamespaceAutoProvision, NamespaceExists, NamespaceLifecycle, ResourceQuota, SecurityContextDeny."`
	AllowPrivileged  bool     `name:"allow-privileged" help:"Allow pods with privileged containers (off, as in v1.0: such pods are refused with 422)."`
	// Tracing (issue 15): spans kept in memory (kubeactor trace) and exported with OTLP.
	Tracing       bool    `name:"tracing" default:"true" negatable:"" help:"Trace requests, actor messages, syncs and scheduling rounds (kubeactor trace, kubeactor explain)."`
	TraceSampling float64 `name:"trace-sampling" default:"1" help:"Ratio of new traces sampled, 0 to 1 (a request's sampled traceparent is always followed)."`
	TraceSpans    int     `name:"trace-spans" default:"20000" help:"Finished spans kept in memory for kubeactor trace."`
	OTLPEndpoint  string  `name:"otlp-endpoint" help:"Export spans with OTLP over HTTP to this collector (host:port, or a URL ending in /v1/traces)."`
	// SchedulerPolicy is the content of PolicyConfigFile, read and checked by Validate.
	SchedulerPolicy []byte `kong:"-"`
	Security
	Replica
}

// Replica makes the server one of several master replicas sharing one Raft-replicated
// store (issue 13); the flags are named like etcd's. Without --initial-cluster or
// --join the server is a store of one, as before.
type Replica struct {
	Name                string `name:"name" help:"This replica's name, unique among the replicas (default: the host name)."`
	PeerAddress         string `name:"peer-address" help:"host:port of this replica's peer port: Raft and the API requests other replicas forward (default: its --initial-cluster entry, else 127.0.0.1:2380; only with --initial-cluster or --join). A trusted network: forwarded requests are believed, so bind it where only the replicas reach."`
	ActorAddress        string `name:"actor-address" help:"host:port of this replica's actor transport (protoactor remote), where the other replicas send messages to the controller actors it hosts (default: the --peer-address host with a free port; only with --initial-cluster or --join). Plaintext: bind it where only the replicas reach."`
	InitialCluster      string `name:"initial-cluster" help:"Every member of a new cluster, this one included: name=host:port,... (their peer addresses)."`
	Join                string `name:"join" help:"Peer URL (http://host:port) of any member of a running cluster: this replica asks to be added to it."`
	InitialClusterState string `name:"initial-cluster-state" default:"new" enum:"new,existing" help:"new or existing (etcd's flag; accepted: whether the replica starts a cluster is told by --initial-cluster or --join, and by the Raft state in --data-dir)."`
	// AllowMembers runs a server without --initial-cluster or --join as a Raft
	// cluster of one, so that kube-controller-manager and kube-scheduler can join
	// it as members (non-voters) that host the controllers or the scheduler. On
	// by default when the binary runs as kube-apiserver (cli/names.go).
	AllowMembers bool `name:"allow-members" help:"Run the store as a Raft cluster of one (its peer port on --peer-address, default a free loopback port) so that kube-controller-manager and kube-scheduler (this binary under those names, --master URL) can join as members that host the controllers or the scheduler. On when run as kube-apiserver."`
	// Raft timing, in milliseconds as etcd's flags (0: the store's LAN defaults).
	HeartbeatInterval int `name:"heartbeat-interval" help:"Milliseconds between the leader's heartbeats (etcd's flag). Raft (hashicorp/raft) heartbeats every tenth of the election timeout: alone, this sets the election timeout to ten times it; with --election-timeout it must be at most a fifth of it. Default: a tenth of the election timeout."`
	ElectionTimeout   int `name:"election-timeout" help:"Milliseconds a follower waits without hearing from the leader before it campaigns (randomized up to twice that), and a candidate waits for votes (etcd's flag). The leader steps down after as long without a majority. Lower means a faster failover and, on a loaded machine, more needless elections. Default: the store's, 300."`
	// Snapshots of the replicated store (0: the store's defaults).
	SnapshotCount    uint64        `name:"snapshot-count" help:"Raft entries between two snapshots of the replicated store (etcd's --snapshot-count; 0: the default, 8192)."`
	TrailingLogs     uint64        `name:"trailing-logs" help:"Raft entries a snapshot leaves in the log, for replicas a little behind (0: the default, 10240); a replica further behind catches up by snapshot install."`
	SnapshotInterval time.Duration `name:"snapshot-interval" help:"How often the replicated store checks whether --snapshot-count entries passed (0: the default, 30s)."`
	// Cluster is --initial-cluster parsed by Validate: name -> peer address.
	Cluster map[string]string `kong:"-"`
}

// Clustered reports whether the server is one of several replicas.
func (r *Replica) Clustered() bool { return r.InitialCluster != "" || r.Join != "" }

// DefaultPeerAddress is the peer port's address when clustering without --peer-address.
const DefaultPeerAddress = "127.0.0.1:2380"

// ParseInitialCluster parses name=host:port,... : names unique and valid, addresses
// host:port with a port, unique.
func ParseInitialCluster(s string) (map[string]string, error) {
	out := map[string]string{}
	seen := map[string]string{}
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, addr, ok := strings.Cut(entry, "=")
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("--initial-cluster %q: want name=host:port, got %q", s, entry)
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("--initial-cluster: name %q: %s", name, strings.Join(errs, "; "))
		}
		if err := checkHostPort(addr); err != nil {
			return nil, fmt.Errorf("--initial-cluster: %s=%s: %w", name, addr, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--initial-cluster: %s is named twice", name)
		}
		if other, dup := seen[addr]; dup {
			return nil, fmt.Errorf("--initial-cluster: %s and %s have the same address %s", other, name, addr)
		}
		out[name], seen[addr] = addr, name
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--initial-cluster %q: names no member", s)
	}
	return out, nil
}

// checkHostPort checks host:port (a port from 1 to 65535; the host may be a name).
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port: %w", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: must be from 1 to 65535", port)
	}
	if host == "" {
		return fmt.Errorf("no host in %q", addr)
	}
	return nil
}

// validateReplica checks the replica flags and fills their defaults.
func (r *Replica) validateReplica() error {
	if r.Name == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "default"
		}
		r.Name = strings.ToLower(host)
	}
	switch r.InitialClusterState {
	case "", "new", "existing":
	default:
		return fmt.Errorf("--initial-cluster-state %q: new or existing", r.InitialClusterState)
	}
	if r.SnapshotInterval < 0 {
		return fmt.Errorf("--snapshot-interval %s: must not be negative", r.SnapshotInterval)
	}
	if !r.Clustered() && r.AllowMembers {
		// A cluster of one: the server picks a free loopback peer port unless told.
		if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
			return fmt.Errorf("--name %q: %s", r.Name, strings.Join(errs, "; "))
		}
		if r.ActorAddress != "" {
			if err := checkHostPortFlag("--actor-address", r.ActorAddress); err != nil {
				return err
			}
		}
		if err := r.validateTiming(); err != nil {
			return err
		}
		if r.PeerAddress == "" {
			return nil
		}
		return checkHostPortFlag("--peer-address", r.PeerAddress)
	}
	if !r.Clustered() {
		if r.PeerAddress != "" {
			return fmt.Errorf("--peer-address needs --initial-cluster, --join or --allow-members")
		}
		if r.ActorAddress != "" {
			return fmt.Errorf("--actor-address needs --initial-cluster, --join or --allow-members")
		}
		return nil
	}
	if r.ActorAddress != "" {
		if err := checkHostPortFlag("--actor-address", r.ActorAddress); err != nil {
			return err
		}
	}
	if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
		return fmt.Errorf("--name %q: %s", r.Name, strings.Join(errs, "; "))
	}
	if err := r.validateTiming(); err != nil {
		return err
	}
	if r.InitialCluster != "" && r.Join != "" {
		return fmt.Errorf("--initial-cluster starts a new cluster, --join joins a running one: give one of them")
	}
	if r.InitialCluster != "" {
		cluster, err := ParseInitialCluster(r.InitialCluster)
		if err != nil {
			return err
		}
		own, ok := cluster[r.Name]
		if !ok {
			return fmt.Errorf("--initial-cluster %q does not name this replica (--name %s)", r.InitialCluster, r.Name)
		}
		if r.PeerAddress == "" {
			r.PeerAddress = own
		}
		if r.PeerAddress != own {
			return fmt.Errorf("--peer-address %s differs from this replica's --initial-cluster entry %s=%s", r.PeerAddress, r.Name, own)
		}
		r.Cluster = cluster
	}
	if r.Join != "" {
		u, err := url.Parse(r.Join)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || checkHostPort(u.Host) != nil {
			return fmt.Errorf("--join %q: want the peer URL of a member, http://host:port", r.Join)
		}
	}
	if r.PeerAddress == "" {
		r.PeerAddress = DefaultPeerAddress
	}
	return checkHostPortFlag("--peer-address", r.PeerAddress)
}

// validateTiming checks --heartbeat-interval and --election-timeout (etcd's rule: the
// election timeout is at least five heartbeats).
func (r *Replica) validateTiming() error {
	if r.HeartbeatInterval < 0 || r.ElectionTimeout < 0 {
		return fmt.Errorf("--heartbeat-interval and --election-timeout are milliseconds, not negative")
	}
	if r.ElectionTimeout > 0 && r.ElectionTimeout < 10 {
		return fmt.Errorf("--election-timeout %d: at least 10 ms", r.ElectionTimeout)
	}
	if r.HeartbeatInterval > 0 && r.ElectionTimeout > 0 && r.ElectionTimeout < 5*r.HeartbeatInterval {
		return fmt.Errorf("--election-timeout %d is less than five --heartbeat-interval %d", r.ElectionTimeout, r.HeartbeatInterval)
	}
	return nil
}

// RaftElectionTimeout is the election timeout the flags ask for (0: the store's
// default): --election-timeout, else ten --heartbeat-interval.
func (r *Replica) RaftElectionTimeout() time.Duration {
	switch {
	case r.ElectionTimeout > 0:
		return time.Duration(r.ElectionTimeout) * time.Millisecond
	case r.HeartbeatInterval > 0:
		return 10 * time.Duration(r.HeartbeatInterval) * time.Millisecond
	}
	return 0
}

func checkHostPortFlag(flag, addr string) error {
	if err := checkHostPort(addr); err != nil {
		return fmt.Errorf("%s %q: %w", flag, addr, err)
	}
	return nil
}

// Security configures the secure port: TLS, authentication and authorization (the
// book's kube-apiserver flags). The insecure port skips authentication and
// authorization, as in v1.0.
type Security struct {
	BindAddress                  string `name:"bind-address" default:"0.0.0.0" help:"IP address on which to serve the secure port."`
	SecurePort                   int    `name:"secure-port" default:"6443" help:"Port of the HTTPS API, with authentication and authorization (0 picks a free port, as --insecure-port 0 does; -1 turns HTTPS off)."`
	TLSCertFile                  string `name:"tls-cert-file" help:"x509 certificate for HTTPS (with intermediates after it). Without it a CA and a serving certificate are made in --cert-dir on first start and reused after."`
	TLSPrivateKeyFile            string `name:"tls-private-key-file" help:"Private key matching --tls-cert-file."`
	CertDir                      string `name:"cert-dir" help:"Directory of the generated CA, serving certificate and admin kubeconfig (default: <data-dir>/pki)."`
	ClientCAFile                 string `name:"client-ca-file" help:"CA certificates (PEM) that sign client certificates; the user is the subject's CN, the groups its O (default: the CA in --cert-dir)."`
	TokenAuthFile                string `name:"token-auth-file" help:"CSV of bearer tokens: token,user,uid[,\"group1,group2\"]."`
	BasicAuthFile                string `name:"basic-auth-file" help:"CSV of basic-auth users: password,user,uid[,\"group1,group2\"]."`
	AnonymousAuth                bool   `name:"anonymous-auth" help:"Serve requests without credentials on the secure port as system:anonymous (default: 401)."`
	AuthorizationMode            string `name:"authorization-mode" default:"AlwaysAllow" enum:"AlwaysAllow,AlwaysDeny,ABAC" help:"Authorization on the secure port: AlwaysAllow, AlwaysDeny or ABAC."`
	AuthorizationPolicyFile      string `name:"authorization-policy-file" help:"ABAC policy: one JSON object per line (user, group, readonly, resource, namespace)."`
	ServiceAccountPrivateKeyFile string `name:"service-account-private-key-file" help:"PEM private key (RSA or EC) that signs service-account tokens (default: the serving key, --tls-private-key-file or the one made in --cert-dir)."`
	ServiceAccountKeyFile        string `name:"service-account-key-file" help:"PEM keys that verify service-account tokens: public keys, certificates or private keys (default: the signing key's public half)."`
	ServiceAccountLookup         bool   `name:"service-account-lookup" default:"true" help:"Refuse a service-account token whose secret or account was deleted (--service-account-lookup=false turns it off)."`
	RootCAFile                   string `name:"root-ca-file" help:"CA certificate (PEM) put in service-account token secrets as ca.crt (default: the CA made in --cert-dir, when it signed the serving certificate)."`
	// The files' contents, read by Validate (parsed by the command, which owns the
	// parsers): never logged.
	TokenAuth, BasicAuth, AuthorizationPolicy, ClientCA []byte `kong:"-"`
	ServiceAccountPrivateKey, ServiceAccountKey, RootCA []byte `kong:"-"`
}

// SecureAddress is the host:port the secure API listens on.
func (s *Security) SecureAddress() string {
	return net.JoinHostPort(s.BindAddress, strconv.Itoa(s.SecurePort))
}

// validateSecurity checks the security flags and reads their files.
func (s *Server) validateSecurity() error {
	if s.CertDir == "" {
		s.CertDir = filepath.Join(s.DataDir, "pki")
	}
	if s.BindAddress == "" {
		s.BindAddress = "0.0.0.0"
	}
	if s.SecurePort < -1 || s.SecurePort > 65535 {
		return fmt.Errorf("--secure-port %d: must be between -1 (off) and 65535", s.SecurePort)
	}
	if net.ParseIP(s.BindAddress) == nil {
		return fmt.Errorf("--bind-address %q: not an IP address", s.BindAddress)
	}
	if (s.TLSCertFile == "") != (s.TLSPrivateKeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together")
	}
	switch s.AuthorizationMode {
	case "", "AlwaysAllow", "AlwaysDeny":
		if s.AuthorizationPolicyFile != "" {
			return fmt.Errorf("--authorization-policy-file needs --authorization-mode ABAC")
		}
	case "ABAC":
		if s.AuthorizationPolicyFile == "" {
			return fmt.Errorf("--authorization-mode ABAC needs --authorization-policy-file")
		}
	default:
		return fmt.Errorf("--authorization-mode %q: AlwaysAllow, AlwaysDeny or ABAC", s.AuthorizationMode)
	}
	for _, f := range []struct {
		flag, path string
		into       *[]byte
	}{
		{"--token-auth-file", s.TokenAuthFile, &s.TokenAuth},
		{"--basic-auth-file", s.BasicAuthFile, &s.BasicAuth},
		{"--authorization-policy-file", s.AuthorizationPolicyFile, &s.AuthorizationPolicy},
		{"--client-ca-file", s.ClientCAFile, &s.ClientCA},
		{"--service-account-private-key-file", s.ServiceAccountPrivateKeyFile, &s.ServiceAccountPrivateKey},
		{"--service-account-key-file", s.ServiceAccountKeyFile, &s.ServiceAccountKey},
		{"--root-ca-file", s.RootCAFile, &s.RootCA},
	} {
		if f.path == "" {
			continue
		}
		data, err := os.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
		*f.into = data
	}
	return nil
}

// DefaultDataDir is where the store lives when --data-dir is not given.
func DefaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "kubeactor", "data")
	}
	return filepath.Join(home, ".kubeactor", "data")
}

// Address is the host:port the insecure API listens on.
func (s *Server) Address() string {
	return net.JoinHostPort(s.InsecureBindAddress, strconv.Itoa(s.InsecurePort))
}

// Validate fills derived defaults and reports the first invalid setting.
func (s *Server) Validate() error {
	if s.DataDir == "" {
		s.DataDir = DefaultDataDir()
	}
	if net.ParseIP(s.InsecureBindAddress) == nil {
		return fmt.Errorf("--insecure-bind-address %q: not an IP address", s.InsecureBindAddress)
	}
	if s.InsecurePort < 0 || s.InsecurePort > 65535 {
		return fmt.Errorf("--insecure-port %d: must be between 0 and 65535", s.InsecurePort)
	}
	if s.ChangeLogWindow < 1 {
		return fmt.Errorf("--change-log-window %d: must be at least 1", s.ChangeLogWindow)
	}
	if s.RequestTimeout <= 0 {
		return fmt.Errorf("--request-timeout %s: must be positive", s.RequestTimeout)
	}
	if s.TraceSampling < 0 || s.TraceSampling > 1 {
		return fmt.Errorf("--trace-sampling %v: must be between 0 and 1", s.TraceSampling)
	}
	if s.TraceSpans < 0 {
		return fmt.Errorf("--trace-spans %d: must not be negative (0: the default)", s.TraceSpans)
	}
	if s.EventTTL <= 0 {
		return fmt.Errorf("--event-ttl %s: must be positive", s.EventTTL)
	}
	if s.ResourceQuotaSyncPeriod < 0 {
		return fmt.Errorf("--resource-quota-sync-period %s: must not be negative", s.ResourceQuotaSyncPeriod)
	}
	if err := s.NodeController.Validate(); err != nil {
		return err
	}
	if _, err := s.ClusterIPRange(); err != nil {
		return err
	}
	if _, _, err := s.NodePortRange(); err != nil {
		return err
	}
	if s.AdvertiseAddress != "" && net.ParseIP(s.AdvertiseAddress) == nil {
		return fmt.Errorf("--advertise-address %q: not an IP address", s.AdvertiseAddress)
	}
	if err := s.validateDNS(); err != nil {
		return err
	}
	if s.AllocateNodeCIDRs {
		if _, err := s.PodCIDRs(); err != nil {
			return err
		}
	}
	if err := s.validateMemory(); err != nil {
		return err
	}
	if s.MaxRequestBodyBytes < 1024 {
		return fmt.Errorf("--max-request-body-bytes %d: must be at least 1024", s.MaxRequestBodyBytes)
	}
	if s.SchedulerShards < 0 {
		return fmt.Errorf("--scheduler-shards %d: must not be negative", s.SchedulerShards)
	}
	if err := s.validateSecurity(); err != nil {
		return err
	}
	if err := s.validateReplica(); err != nil {
		return err
	}
	if err := admission.Check(s.AdmissionControl); err != nil {
		return fmt.Errorf("--admission-control: %w", err)
	}
	if s.PolicyConfigFile != "" {
		data, err := os.ReadFile(s.PolicyConfigFile)
		if err != nil {
			return fmt.Errorf("--policy-config-file: %w", err)
		}
		if _, err := scheduler.ParsePolicy(data); err != nil {
			return fmt.Errorf("--policy-config-file %s: %w", s.PolicyConfigFile, err)
		}
		s.SchedulerPolicy = data
	}
	return nil
}

// Logging configures logrus for every command.
type Logging struct {
	LogLevel  string `name:"log-level" default:"info" enum:"debug,info,warn,error" help:"Log level (debug, info, warn, error)."`
	LogFormat string `name:"log-format" default:"text" enum:"text,json" help:"Log format (text or json)."`
}

// NodeController are the node controller's flags (the book's
// kube-controller-manager's): kube-apiserver takes them for the node actors it
// hosts, and kube-controller-manager as a member (cli/member.go) for those it hosts.
type NodeController struct {
	NodeMonitorGracePeriod time.Duration `name:"node-monitor-grace-period" default:"40s" help:"How long a node may go without posting status before it is marked Unknown."`
	NodeStartupGracePeriod time.Duration `name:"node-startup-grace-period" default:"60s" help:"How long a new node may go without ever posting status before it is marked Unknown."`
	NodeMonitorPeriod      time.Duration `name:"node-monitor-period" default:"5s" help:"How often a node whose pods are due for eviction is looked at again; a node is otherwise looked at when its heartbeat is late or its eviction timeout ends."`
	PodEvictionTimeout     time.Duration `name:"pod-eviction-timeout" default:"5m" help:"How long a node may be NotReady or Unknown before its pods are deleted."`
	DeletingPodsQPS        float64       `name:"deleting-pods-qps" default:"0.1" help:"Nodes whose pods are evicted per second."`
	DeletingPodsBurst      int           `name:"deleting-pods-burst" default:"10" help:"Nodes whose pods may be evicted in a burst."`
}

// Validate checks that every period and rate is positive.
func (n NodeController) Validate() error {
	if n.NodeMonitorGracePeriod <= 0 || n.NodeStartupGracePeriod <= 0 || n.NodeMonitorPeriod <= 0 || n.PodEvictionTimeout <= 0 {
		return fmt.Errorf("--node-monitor-grace-period, --node-startup-grace-period, --node-monitor-period and --pod-eviction-timeout must be positive")
	}
	if n.DeletingPodsQPS <= 0 || n.DeletingPodsBurst < 1 {
		return fmt.Errorf("--deleting-pods-qps %v and --deleting-pods-burst %d: must be positive", n.DeletingPodsQPS, n.DeletingPodsBurst)
	}
	return nil
}

// ClusterIPRange parses --service-cluster-ip-range.
func (s *Server) ClusterIPRange() (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s.ServiceClusterIPRange)
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 || p.Bits() < 12 {
		return netip.Prefix{}, fmt.Errorf("--service-cluster-ip-range %q: must be an IPv4 CIDR from /12 to /30", s.ServiceClusterIPRange)
	}
	return p.Masked(), nil
}

// NodePortRange parses --service-node-port-range ("min-max", inclusive): its first
// port and size.
func (s *Server) NodePortRange() (base, size int, err error) {
	lo, hi, ok := strings.Cut(s.ServiceNodePortRange, "-")
	a, errA := strconv.Atoi(strings.TrimSpace(lo))
	b, errB := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || errA != nil || errB != nil || a < 1 || b > 65535 || a > b {
		return 0, 0, fmt.Errorf("--service-node-port-range %q: must be min-max, from 1 to 65535", s.ServiceNodePortRange)
	}
	return a, b - a + 1, nil
}

// validateDNS checks the DNS flags and fills --dns-bind-address's default; it
// normalises --cluster-domain (lower case, no trailing dot).
func (s *Server) validateDNS() error {
	if s.DNSPort < 0 || s.DNSPort > 65535 {
		return fmt.Errorf("--dns-port %d: must be between 0 and 65535", s.DNSPort)
	}
	if s.DNSBindAddress == "" {
		s.DNSBindAddress = s.InsecureBindAddress
	}
	if net.ParseIP(s.DNSBindAddress) == nil {
		return fmt.Errorf("--dns-bind-address %q: not an IP address", s.DNSBindAddress)
	}
	s.ClusterDomain = strings.ToLower(strings.TrimSuffix(s.ClusterDomain, "."))
	if errs := validation.IsDNS1123Subdomain(s.ClusterDomain); len(errs) > 0 {
		return fmt.Errorf("--cluster-domain %q: %s", s.ClusterDomain, strings.Join(errs, "; "))
	}
	_, err := s.ClusterDNSAddress()
	return err
}

// ClusterDNSAddress parses --cluster-dns: an address of --service-cluster-ip-range that
// can be a service's (not the network, broadcast or kubernetes service address).
func (s *Server) ClusterDNSAddress() (netip.Addr, error) {
	r, err := s.ClusterIPRange()
	if err != nil {
		return netip.Addr{}, err
	}
	ip, err := netip.ParseAddr(s.ClusterDNS)
	if err != nil || !ip.Is4() {
		return netip.Addr{}, fmt.Errorf("--cluster-dns %q: not an IPv4 address", s.ClusterDNS)
	}
	first := r.Addr().Next() // the kubernetes service's
	b := r.Addr().As4()
	v := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) | (1<<(32-r.Bits()) - 1)
	last := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}) // broadcast
	if !r.Contains(ip) || ip == r.Addr() || ip == first || ip == last {
		return netip.Addr{}, fmt.Errorf("--cluster-dns %s: must be a usable address of --service-cluster-ip-range %s other than %s (the kubernetes service's)", ip, r, first)
	}
	return ip, nil
}

// DNSAddress is the host:port the DNS server listens on (UDP and TCP).
func (s *Server) DNSAddress() string {
	return net.JoinHostPort(s.DNSBindAddress, strconv.Itoa(s.DNSPort))
}

// PodCIDRs parses --cluster-cidr and --node-cidr-mask-size. The cluster CIDR may not
// overlap the service cluster IP range.
func (s *Server) PodCIDRs() (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s.ClusterCIDR)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("--cluster-cidr %q: must be an IPv4 CIDR", s.ClusterCIDR)
	}
	p = p.Masked()
	if _, err := node.NewCIDRs(p, s.NodeCIDRMaskSize); err != nil {
		return netip.Prefix{}, fmt.Errorf("--cluster-cidr %s, --node-cidr-mask-size %d: %w", p, s.NodeCIDRMaskSize, err)
	}
	if r, err := s.ClusterIPRange(); err == nil && r.Overlaps(p) {
		return netip.Prefix{}, fmt.Errorf("--cluster-cidr %s: overlaps --service-cluster-ip-range %s", p, r)
	}
	return p, nil
}
