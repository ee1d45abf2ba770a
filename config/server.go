package config

import (
	"fmt"
	"net"
	"net/netip"
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
	EventTTL            time.Duration `name:"event-ttl" default:"1h" help:"How long an event is kept after it was last seen."`
	// ResourceQuotaSyncPeriod is the book's controller-manager flag.
	ResourceQuotaSyncPeriod time.Duration `name:"resource-quota-sync-period" default:"10s" help:"How often each resource quota recounts its usage (it also recounts when what it counts changes)."`
	// TerminatedPodGCThreshold is the book's controller-manager flag.
	TerminatedPodGCThreshold int `name:"terminated-pod-gc-threshold" default:"12500" help:"Terminated pods (Succeeded or Failed) kept before the oldest are deleted, every 20s; 0 or less keeps them all."`
	// The node controller and service addresses (the book's controller-manager and
	// apiserver flags).
	NodeMonitorGracePeriod time.Duration `name:"node-monitor-grace-period" default:"40s" help:"How long a node may go without posting status before it is marked Unknown."`
	NodeStartupGracePeriod time.Duration `name:"node-startup-grace-period" default:"60s" help:"How long a new node may go without ever posting status before it is marked Unknown."`
	NodeMonitorPeriod      time.Duration `name:"node-monitor-period" default:"5s" help:"How often each node's status is looked at."`
	PodEvictionTimeout     time.Duration `name:"pod-eviction-timeout" default:"5m" help:"How long a node may be NotReady or Unknown before its pods are deleted."`
	DeletingPodsQPS        float64       `name:"deleting-pods-qps" default:"0.1" help:"Nodes whose pods are evicted per second."`
	DeletingPodsBurst      int           `name:"deleting-pods-burst" default:"10" help:"Nodes whose pods may be evicted in a burst."`
	ServiceClusterIPRange  string        `name:"service-cluster-ip-range" default:"10.254.0.0/16" help:"CIDR from which service cluster IPs are allocated."`
	ServiceNodePortRange   string        `name:"service-node-port-range" default:"30000-32767" help:"Port range from which NodePort services' ports are allocated."`
	AdvertiseAddress       string        `name:"advertise-address" help:"IP address the kubernetes service's endpoints point at (default: --insecure-bind-address, or the first non-loopback address when that is 0.0.0.0)."`
	GCPercent              int           `name:"gc-percent" default:"400" help:"Go GC target percentage (GOGC) for the server; the stored objects are a large, steady live heap, so collecting less often saves CPU at the price of memory. The GOGC environment variable wins when set."`
	PolicyConfigFile       string        `name:"policy-config-file" help:"Scheduler policy file (JSON: predicates and weighted priorities, as v1.0's); default: the default provider."`
	SchedulerShards        int           `name:"scheduler-shards" default:"1" help:"Shard actors bidding nodes in parallel. Bids are cached per pod class, so a round is little work and each extra shard adds a message hop to it: one is fastest on small machines (0 means 1)."`
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
}

// Security configures the secure port: TLS, authentication and authorization (the
// book's kube-apiserver flags). The insecure port skips authentication and
// authorization, as in v1.0.
type Security struct {
	BindAddress             string `name:"bind-address" default:"0.0.0.0" help:"IP address on which to serve the secure port."`
	SecurePort              int    `name:"secure-port" default:"6443" help:"Port of the HTTPS API, with authentication and authorization (0 picks a free port, as --insecure-port 0 does; -1 turns HTTPS off)."`
	TLSCertFile             string `name:"tls-cert-file" help:"x509 certificate for HTTPS (with intermediates after it). Without it a CA and a serving certificate are made in --cert-dir on first start and reused after."`
	TLSPrivateKeyFile       string `name:"tls-private-key-file" help:"Private key matching --tls-cert-file."`
	CertDir                 string `name:"cert-dir" help:"Directory of the generated CA, serving certificate and admin kubeconfig (default: <data-dir>/pki)."`
	ClientCAFile            string `name:"client-ca-file" help:"CA certificates (PEM) that sign client certificates; the user is the subject's CN, the groups its O (default: the CA in --cert-dir)."`
	TokenAuthFile           string `name:"token-auth-file" help:"CSV of bearer tokens: token,user,uid[,\"group1,group2\"]."`
	BasicAuthFile           string `name:"basic-auth-file" help:"CSV of basic-auth users: password,user,uid[,\"group1,group2\"]."`
	AnonymousAuth           bool   `name:"anonymous-auth" help:"Serve requests without credentials on the secure port as system:anonymous (default: 401)."`
	AuthorizationMode       string `name:"authorization-mode" default:"AlwaysAllow" enum:"AlwaysAllow,AlwaysDeny,ABAC" help:"Authorization on the secure port: AlwaysAllow, AlwaysDeny or ABAC."`
	AuthorizationPolicyFile string `name:"authorization-policy-file" help:"ABAC policy: one JSON object per line (user, group, readonly, resource, namespace)."`
	// The files' contents, read by Validate (parsed by the command, which owns the
	// parsers): never logged.
	TokenAuth, BasicAuth, AuthorizationPolicy, ClientCA []byte `kong:"-"`
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
	if s.NodeMonitorGracePeriod <= 0 || s.NodeStartupGracePeriod <= 0 || s.NodeMonitorPeriod <= 0 || s.PodEvictionTimeout <= 0 {
		return fmt.Errorf("--node-monitor-grace-period, --node-startup-grace-period, --node-monitor-period and --pod-eviction-timeout must be positive")
	}
	if s.DeletingPodsQPS <= 0 || s.DeletingPodsBurst < 1 {
		return fmt.Errorf("--deleting-pods-qps %v and --deleting-pods-burst %d: must be positive", s.DeletingPodsQPS, s.DeletingPodsBurst)
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
	if s.GCPercent < 10 {
		return fmt.Errorf("--gc-percent %d: must be at least 10", s.GCPercent)
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
