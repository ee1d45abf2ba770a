package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// maxSimulatedNodes is how many nodes one simulator can run (the derived pod CIDRs
// 10.100.0.0/24 to 10.255.255.0/24).
const maxSimulatedNodes = (256 - 100) * 256

// Agent configures `kubeactor agent`, the node agent (the book's kubelet). With
// --simulate N it runs N simulated nodes in one process. `_` is accepted for `-`.
type Agent struct {
	Server                    string        `name:"server" aliases:"api-servers" default:"http://127.0.0.1:8080" help:"URL of the API server (the kubelet's --api-servers); several master replicas' separated by commas, the next used when one cannot be reached."`
	Kubeconfig                string        `name:"kubeconfig" help:"kubeconfig giving the credentials (client certificate, token or basic auth) and CA for the API server; its server is used unless --server is given."`
	Simulate                  int           `name:"simulate" default:"0" help:"Run this many simulated nodes instead of a Docker node (1 to 39936)."`
	NamePrefix                string        `name:"name-prefix" default:"sim" help:"Simulated nodes are named <prefix>-0 ... <prefix>-<N-1>."`
	NodeStatusUpdateFrequency time.Duration `name:"node-status-update-frequency" default:"10s" help:"How often each node posts its status."`
	CapacityCPU               string        `name:"capacity-cpu" default:"4" help:"CPU capacity of each simulated node."`
	CapacityMemory            string        `name:"capacity-memory" default:"16Gi" help:"Memory capacity of each simulated node."`
	MaxPods                   int           `name:"max-pods" default:"110" help:"Pods each node runs at most (its pods capacity)."`
	KubeAPIQPS                float32       `name:"kube-api-qps" default:"1000" help:"Requests per second to the API server; negative for no limit."`
	KubeAPIBurst              int           `name:"kube-api-burst" default:"2000" help:"Burst of requests above --kube-api-qps."`
	Workers                   int           `name:"workers" default:"32" help:"Concurrent writers of node and pod status."`
	StatsInterval             time.Duration `name:"stats-interval" default:"1m" help:"How often to log the agent's counters; 0 for never."`
	// Tracing (issue 15): the Docker agent's spans go to the API server's store.
	Tracing       bool    `name:"tracing" default:"true" negatable:"" help:"Trace pod syncs, image pulls, container creates and starts and probe transitions, continuing the trace of the pod's last write, and send the spans to the API server (kubeactor trace)."`
	TraceSampling float64 `name:"trace-sampling" default:"1" help:"Ratio of new traces sampled, 0 to 1 (a sync continuing a sampled server trace is always traced)."`

	// The Docker agent (no --simulate).
	NodeName                      string        `name:"node-name" aliases:"hostname-override" help:"Name of this node (default: the hostname)."`
	NodeIP                        string        `name:"node-ip" help:"IP address the node reports and the API server reaches it at (default: the first non-loopback IPv4 address)."`
	Address                       string        `name:"address" default:"0.0.0.0" help:"IP address of the agent's server (logs, exec, port-forward, stats)."`
	Port                          int           `name:"port" default:"10250" help:"Port of the agent's server; 0 picks a free one."`
	ReadOnlyPort                  int           `name:"read-only-port" default:"10255" help:"Port of the agent's read-only server on --address (pods, spec, stats, healthz; no logs, exec or port-forward); 0 disables it."`
	HealthzPort                   int           `name:"healthz-port" default:"10248" help:"Port of the agent's healthz server; 0 disables it."`
	HealthzBindAddress            string        `name:"healthz-bind-address" default:"127.0.0.1" help:"IP address of the healthz server."`
	PodInfraContainerImage        string        `name:"pod-infra-container-image" default:"kubeactor/pause:latest" help:"Image of each pod's infra container, which holds its network namespace; when the engine lacks it, the agent builds it from its own binary (no registry needed)."`
	RootDir                       string        `name:"root-dir" help:"Directory for pod volumes (default: ~/.kubeactor/agent)."`
	SyncFrequency                 time.Duration `name:"sync-frequency" default:"10s" help:"Longest time between two syncs of a pod."`
	MaxDeadContainersPerContainer int           `name:"maximum-dead-containers-per-container" default:"2" help:"Dead instances kept of each container."`
	MaxDeadContainers             int           `name:"maximum-dead-containers" default:"100" help:"Dead containers kept in all; negative for no limit."`
	PodManifestPath               string        `name:"pod-manifest-path" aliases:"config" help:"File or directory of static pod manifests (the book's --config)."`
	FileCheckFrequency            time.Duration `name:"file-check-frequency" default:"20s" help:"How often --pod-manifest-path is read."`
	ClusterDNS                    string        `name:"cluster-dns" help:"Nameserver put in the resolv.conf of pods with dnsPolicy ClusterFirst."`
	ClusterDomain                 string        `name:"cluster-domain" default:"cluster.local" help:"Domain of the cluster's DNS names (the search list of ClusterFirst pods)."`
	MinimumContainerTTL           time.Duration `name:"minimum-container-ttl-duration" default:"1m" help:"How long a dead container is kept at least before it may be collected."`
	RegisterNode                  bool          `name:"register-node" default:"true" negatable:"" help:"Create this node's Node object on the API server (--register-node=false: someone else does; the agent still runs the pods bound to its name and posts the node's status once it exists)."`
	ManifestURL                   string        `name:"manifest-url" help:"URL of static pod manifests (a pod, a list of pods, or YAML documents), fetched every --http-check-frequency; run as --pod-manifest-path's are."`
	HTTPCheckFrequency            time.Duration `name:"http-check-frequency" default:"20s" help:"How often --manifest-url is fetched."`
	ImageGCHighThreshold          int           `name:"image-gc-high-threshold" default:"90" help:"Percent of the Docker data root's filesystem in use above which unused images are removed (100 disables image collection)."`
	ImageGCLowThreshold           int           `name:"image-gc-low-threshold" default:"80" help:"Percent of the Docker data root's filesystem in use that image collection brings the use down to."`
	MinimumImageTTL               time.Duration `name:"minimum-image-ttl-duration" default:"2m" help:"How long image collection keeps an image the agent has just seen (pulled for a container about to start, or present when the agent started)."`
	GCPeriod                      time.Duration `name:"gc-period" default:"1m" hidden:"" help:"How often dead containers, then unused images, are collected."`
	ImageGCScope                  string        `name:"image-gc-scope" hidden:"" help:"For tests on a shared engine: image collection considers only the images with a tag beginning with this prefix and keeps every other one as if in use."`
	ProxyMode                     string        `name:"proxy-mode" default:"iptables" enum:"iptables,userspace,none" help:"The service proxy the agent runs: iptables (the kernel DNATs cluster IPs and NodePorts to endpoints), userspace (the book's proxy sockets) or none."`
	NetworkPlugin                 string        `name:"network-plugin" default:"docker" enum:"docker,bridge" help:"Pod networking: docker (the engine's bridge) or bridge (the agent's own bridge for the node's pod CIDR, with direct routes to the other nodes)."`
	BridgeName                    string        `name:"bridge-name" default:"kbr0" help:"The bridge of --network-plugin=bridge."`
	ClusterCIDR                   string        `name:"cluster-cidr" default:"10.244.0.0/16" help:"The pods' address range; with --network-plugin=bridge, pod traffic leaving it is masqueraded."`
	DockerNetwork                 string        `name:"docker-network" help:"Docker network the pods' infra containers join (default: Docker's bridge)."`
}

// DefaultAgentServer is --server's default.
const DefaultAgentServer = "http://127.0.0.1:8080"

// APIServer is the server to reach: --server, or "" (the kubeconfig's) when a
// --kubeconfig is given and --server was left at its default.
func (a *Agent) APIServer() string {
	if a.Kubeconfig != "" && a.Server == DefaultAgentServer {
		return ""
	}
	return a.Server
}

// Validate reports the first invalid setting.
func (a *Agent) Validate() error {
	// Several servers (master replicas) are separated by commas; the agent moves to
	// the next when one cannot be reached.
	for _, srv := range strings.Split(a.Server, ",") {
		u, err := url.Parse(strings.TrimSpace(srv))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--server %q: want http://host:port, or several separated by commas", a.Server)
		}
	}
	if a.Simulate < 0 || a.Simulate > maxSimulatedNodes {
		return fmt.Errorf("--simulate %d: must be between 1 and %d (0 is the Docker agent)", a.Simulate, maxSimulatedNodes)
	}
	if errs := validation.IsDNS1123Subdomain(fmt.Sprintf("%s-%d", a.NamePrefix, max(a.Simulate-1, 0))); len(errs) > 0 {
		return fmt.Errorf("--name-prefix %q: node names would be invalid: %s", a.NamePrefix, errs[0])
	}
	if a.NodeStatusUpdateFrequency < 100*time.Millisecond {
		return fmt.Errorf("--node-status-update-frequency %s: must be at least 100ms", a.NodeStatusUpdateFrequency)
	}
	for flag, v := range map[string]string{"--capacity-cpu": a.CapacityCPU, "--capacity-memory": a.CapacityMemory} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("%s %q: %w", flag, v, err)
		}
		if q.Sign() <= 0 {
			return fmt.Errorf("%s %q: must be positive", flag, v)
		}
	}
	if a.MaxPods < 1 {
		return fmt.Errorf("--max-pods %d: must be at least 1", a.MaxPods)
	}
	if a.KubeAPIQPS > 0 && a.KubeAPIBurst < 1 {
		return fmt.Errorf("--kube-api-burst %d: must be at least 1 when --kube-api-qps is set", a.KubeAPIBurst)
	}
	if a.Workers < 1 || a.Workers > 1024 {
		return fmt.Errorf("--workers %d: must be between 1 and 1024", a.Workers)
	}
	if a.NodeName != "" {
		if errs := validation.IsDNS1123Subdomain(a.NodeName); len(errs) > 0 {
			return fmt.Errorf("--node-name %q: %s", a.NodeName, errs[0])
		}
	}
	if a.NodeIP != "" {
		if ip, err := netip.ParseAddr(a.NodeIP); err != nil || !ip.Is4() {
			return fmt.Errorf("--node-ip %q: want an IPv4 address", a.NodeIP)
		}
	}
	if ip, err := netip.ParseAddr(a.Address); err != nil || !ip.Is4() {
		return fmt.Errorf("--address %q: want an IPv4 address", a.Address)
	}
	for _, p := range []struct {
		flag string
		port int
	}{{"--port", a.Port}, {"--read-only-port", a.ReadOnlyPort}, {"--healthz-port", a.HealthzPort}} {
		if p.port < 0 || p.port > 65535 {
			return fmt.Errorf("%s %d: must be between 0 and 65535", p.flag, p.port)
		}
	}
	if a.HealthzPort != 0 && net.ParseIP(a.HealthzBindAddress) == nil {
		return fmt.Errorf("--healthz-bind-address %q: not an IP address", a.HealthzBindAddress)
	}
	if a.PodInfraContainerImage == "" {
		return fmt.Errorf("--pod-infra-container-image: must not be empty")
	}
	if a.SyncFrequency < 100*time.Millisecond {
		return fmt.Errorf("--sync-frequency %s: must be at least 100ms", a.SyncFrequency)
	}
	if a.MaxDeadContainersPerContainer < 0 {
		return fmt.Errorf("--maximum-dead-containers-per-container %d: must not be negative", a.MaxDeadContainersPerContainer)
	}
	if a.MinimumContainerTTL < 0 {
		return fmt.Errorf("--minimum-container-ttl-duration %s: must not be negative", a.MinimumContainerTTL)
	}
	for _, th := range []struct {
		flag string
		v    int
	}{{"--image-gc-high-threshold", a.ImageGCHighThreshold}, {"--image-gc-low-threshold", a.ImageGCLowThreshold}} {
		if th.v < 0 || th.v > 100 {
			return fmt.Errorf("%s %d: must be between 0 and 100", th.flag, th.v)
		}
	}
	if a.MinimumImageTTL < time.Second {
		return fmt.Errorf("--minimum-image-ttl-duration %s: must be at least 1s", a.MinimumImageTTL)
	}
	if a.ImageGCLowThreshold > a.ImageGCHighThreshold {
		return fmt.Errorf("--image-gc-low-threshold %d: must not be above --image-gc-high-threshold %d", a.ImageGCLowThreshold, a.ImageGCHighThreshold)
	}
	if a.ManifestURL != "" {
		if u, err := url.Parse(a.ManifestURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--manifest-url %q: want an http:// or https:// URL", a.ManifestURL)
		}
	}
	if a.HTTPCheckFrequency < 100*time.Millisecond {
		return fmt.Errorf("--http-check-frequency %s: must be at least 100ms", a.HTTPCheckFrequency)
	}
	if a.GCPeriod < 100*time.Millisecond {
		return fmt.Errorf("--gc-period %s: must be at least 100ms", a.GCPeriod)
	}
	if a.FileCheckFrequency < 100*time.Millisecond {
		return fmt.Errorf("--file-check-frequency %s: must be at least 100ms", a.FileCheckFrequency)
	}
	if _, err := netip.ParsePrefix(a.ClusterCIDR); err != nil {
		return fmt.Errorf("--cluster-cidr %q: %v", a.ClusterCIDR, err)
	}
	if len(a.BridgeName) == 0 || len(a.BridgeName) > 15 {
		return fmt.Errorf("--bridge-name %q: must be 1 to 15 characters", a.BridgeName)
	}
	if a.ClusterDNS != "" {
		if ip, err := netip.ParseAddr(a.ClusterDNS); err != nil || !ip.Is4() {
			return fmt.Errorf("--cluster-dns %q: want an IPv4 address", a.ClusterDNS)
		}
	}
	if errs := validation.IsDNS1123Subdomain(a.ClusterDomain); len(errs) > 0 {
		return fmt.Errorf("--cluster-domain %q: %s", a.ClusterDomain, errs[0])
	}
	if a.TraceSampling < 0 || a.TraceSampling > 1 {
		return fmt.Errorf("--trace-sampling %v: must be between 0 and 1", a.TraceSampling)
	}
	if a.StatsInterval < 0 {
		return fmt.Errorf("--stats-interval %s: must not be negative", a.StatsInterval)
	}
	return nil
}
