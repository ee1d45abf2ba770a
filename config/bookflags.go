package config

import (
	"sort"
	"strconv"
	"strings"
)

// The book's component names. The kubeactor binary behaves as the component it is
// run as (a link or a copy named so).
const (
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kubelet           = "kubelet"
	KubeProxy         = "kube-proxy"
	Kubectl           = "kubectl"
)

// Components lists the book's component names.
var Components = []string{APIServer, ControllerManager, Scheduler, Kubelet, KubeProxy, Kubectl}

// BookFlag is a flag the book prints for a component that kubeactor accepts without
// honouring it.
type BookFlag struct {
	Name   string // long name, '-' spelling, without the dashes
	Bool   bool   // takes no separate value (--name or --name=false)
	Reason string // why it has no effect here
}

// Warning says that a flag given on the command line has no effect, and why.
type Warning struct {
	Flag   string // as written: --etcd-servers
	Reason string
}

// bookRenames maps a component's old or book-only flag names onto kubeactor's.
var bookRenames = map[string]map[string]string{
	APIServer: {"address": "insecure-bind-address", "port": "insecure-port", "public-address-override": "bind-address"},
	Kubelet:   {"master": "server", "apiservers": "server"},
}

// bookFirstOf are the flags that take a list in the book where kubeactor uses the
// first element. None now: the kubelet's API servers (--api-servers, --master) are
// the agent's --server list, which moves to the next when one cannot be reached.
var bookFirstOf = map[string]map[string]string{}

const (
	noCloud    = "there is no cloud provider: nodes are machines that run the agent"
	inStore    = "the state is in the embedded Pebble store under --data-dir, not in etcd"
	noCAdvisor = "there is no cAdvisor: the agent serves /stats and /spec itself on --port and --read-only-port"
	noCgroup   = "the agent does not move itself or the system into cgroups"
	noSSH      = "the API server reaches nodes over HTTP, not SSH tunnels"
	apiserver  = "the controllers and the scheduler run inside kube-apiserver (kubeactor server): pass it there"
	// A kube-controller-manager or kube-scheduler with --master is a member of the
	// control plane (cli/member.go).
	memberPort   = "a member serves no port of its own: kube-apiserver's members API lists it"
	memberConfig = "a member reaches kube-apiserver at --master (its members API, then the peer port)"
	withNodes    = "the node controller runs with the node actors inside kube-apiserver (kubeactor server): pass it there"
)

// bookFlags are the flags the book prints for each component that have no effect
// here. A flag kubeactor's command has itself is never stripped, so a flag added
// later as a real one (--admission-control, --allow-privileged, --tls-cert-file) is
// honoured from then on.
var bookFlags = map[string][]BookFlag{
	APIServer: {
		{"etcd-servers", false, inStore},
		{"etcd-config", false, inStore},
		{"etcd-prefix", false, inStore},
		{"old-etcd-prefix", false, inStore},
		{"storage-version", false, "objects are stored as v1"},
		{"kubelet-port", false, "the server reaches each kubelet at the port the node reports in its status (status.daemonEndpoints)"},
		{"kubelet-https", true, "the server reaches kubelets over HTTP"},
		{"kubelet-timeout", false, "requests to kubelets end with the client's request"},
		{"kubelet-certificate-authority", false, "the server reaches kubelets over HTTP"},
		{"kubelet-client-certificate", false, "the server reaches kubelets over HTTP"},
		{"kubelet-client-key", false, "the server reaches kubelets over HTTP"},
		{"admission-control-config-file", false, "the admission plugins take no configuration: --admission-control names them"},
		{"api-burst", false, "the server does not rate-limit clients"},
		{"api-rate", false, "the server does not rate-limit clients"},
		{"api-prefix", false, "the API is always under /api"},
		{"cloud-config", false, noCloud},
		{"cloud-provider", false, noCloud},
		{"cluster-name", false, "the cluster's name is used by cloud providers only"},
		{"cors-allowed-origins", false, "the server sends no CORS headers"},
		{"external-hostname", false, "there are no swagger docs; the kubernetes service points at --advertise-address"},
		{"httptest.serve", false, "there is no mock test server"},
		{"long-running-request-regexp", false, "there is no in-flight limit to exempt requests from"},
		{"max-requests-inflight", false, "the server does not limit requests in flight; writes queue at their actors and time out after --request-timeout"},
		{"min-request-timeout", false, "watches last until the client ends them (or their timeoutSeconds)"},
		{"master-service-namespace", false, "the kubernetes service is always in default"},
		{"runtime-config", false, "only api/v1 is served"},
		{"ssh-keyfile", false, noSSH},
		{"ssh-user", false, noSSH},
		// Controller-manager and scheduler flags: they run here too.
		{"concurrent-endpoint-syncs", false, "each service's endpoints are kept by its own actor"},
		{"concurrent-rc-syncs", false, "each replication controller is its own actor"},
		{"service-sync-period", false, noCloud},
		{"node-sync-period", false, noCloud},
		{"namespace-sync-period", false, "a namespace is finalized as soon as it is deleted"},
		{"pvclaimbinder-sync-period", false, "a pending claim looks again every 10 s, and at once when a volume changes"},
		{"register-retry-count", false, noCloud},
		{"algorithm-provider", false, "the scheduler's default provider is used unless --policy-config-file names predicates and priorities"},
		{"master", false, "kube-apiserver is the master"},
		{"kubeconfig", false, "kube-apiserver is the master"},
	},
	Kubelet: {
		{"enable-server", true, "the agent's server is always on, on --address:--port"},
		{"enable-debugging-handlers", true, "logs, exec, attach and port-forward are always served on --port (never on --read-only-port)"},
		{"allow-privileged", true, "kube-apiserver's --allow-privileged admits or refuses privileged pods; the agent runs the pods it is given"},
		{"cadvisor-port", false, noCAdvisor},
		{"log-cadvisor-usage", true, noCAdvisor},
		{"container-hints", false, noCAdvisor},
		{"docker-only", true, noCAdvisor},
		{"cert-dir", false, "the agent's server is plain HTTP"},
		{"tls-cert-file", false, "the agent's server is plain HTTP"},
		{"tls-private-key-file", false, "the agent's server is plain HTTP"},
		{"chaos-chance", false, "there is no client error injection"},
		{"cloud-config", false, noCloud},
		{"cloud-provider", false, noCloud},
		{"configure-cbr0", true, "use --network-plugin=bridge (the agent's own bridge, --bridge-name, for the node's pod CIDR)"},
		{"container-runtime", false, "the runtime is Docker"},
		{"containerized", true, "the agent runs on the host"},
		{"docker-endpoint", false, "the Docker engine is found from DOCKER_HOST (default unix:///var/run/docker.sock)"},
		{"docker-exec-handler", false, "exec goes through the Docker engine's exec API"},
		{"docker-root", false, "the engine's directories are its own business"},
		{"docker-run", false, "the engine's directories are its own business"},
		{"event-storage-age-limit", false, "events are kept by the API server for its --event-ttl"},
		{"event-storage-event-limit", false, "events are kept by the API server for its --event-ttl"},
		{"google-json-key", false, noCloud},
		{"host-network-sources", false, "pods from every source may use the host's network"},
		{"httptest.serve", false, "there is no mock test server"},
		{"low-diskspace-threshold-mb", false, "pods are not refused for disk space"},
		{"master-service-namespace", false, "the kubernetes service is always in default"},
		{"oom-score-adj", false, "the agent does not change its oom_score_adj"},
		{"pod-cidr", false, "the node's pod CIDR comes from the API server (spec.podCIDR)"},
		{"really-crash-for-testing", true, "a panic ends the agent anyway"},
		{"registry-qps", false, "image pulls are not rate-limited"},
		{"registry-burst", false, "image pulls are not rate-limited"},
		{"resource-container", false, noCgroup},
		{"system-container", false, noCgroup},
		{"runonce", true, "the agent always runs against the API server"},
		{"streaming-connection-idle-timeout", false, "exec and port-forward streams last until either side closes them"},
	},
	KubeProxy: {
		{"bind-address", false, "the proxy serves cluster IPs and NodePorts on every address of the node"},
		{"healthz-bind-address", false, "the service proxy has no healthz server"},
		{"healthz-port", false, "the service proxy has no healthz server"},
		{"oom-score-adj", false, "the proxy does not change its oom_score_adj"},
		{"proxy-port-range", false, "the userspace proxy's sockets take free ports"},
		{"resource-container", false, noCgroup},
	},
	// Without --master, every flag of this list is warned about (the controllers
	// run inside kube-apiserver then). With --master, kube-controller-manager has
	// the node controller's, the quota resync's, the GC threshold's and the token
	// controller's flags itself (cli/member.go), so only the others are warned about.
	ControllerManager: {
		{"address", false, memberPort}, {"port", false, memberPort},
		{"master", false, apiserver}, {"kubeconfig", false, memberConfig},
		{"cloud-provider", false, apiserver}, {"cloud-config", false, apiserver},
		{"concurrent-endpoint-syncs", false, apiserver}, {"concurrent-rc-syncs", false, apiserver},
		{"service-sync-period", false, apiserver}, {"node-sync-period", false, apiserver},
		{"resource-quota-sync-period", false, apiserver}, {"namespace-sync-period", false, apiserver},
		{"pvclaimbinder-sync-period", false, apiserver}, {"register-retry-count", false, apiserver},
		{"node-monitor-grace-period", false, withNodes}, {"node-startup-grace-period", false, withNodes},
		{"node-monitor-period", false, withNodes}, {"pod-eviction-timeout", false, withNodes},
		{"deleting-pods-qps", false, withNodes}, {"deleting-pods-burst", false, withNodes},
		{"service-account-private-key-file", false, apiserver}, {"root-ca-file", false, apiserver},
		{"cluster-name", false, apiserver}, {"cluster-cidr", false, apiserver},
		{"allocate-node-cidrs", true, apiserver}, {"profiling", true, apiserver},
		{"httptest.serve", false, apiserver}, {"terminated-pod-gc-threshold", false, apiserver},
	},
	Scheduler: {
		{"address", false, memberPort}, {"port", false, memberPort},
		{"master", false, apiserver}, {"kubeconfig", false, memberConfig},
		{"algorithm-provider", false, "the default provider is used unless --policy-config-file names predicates and priorities"}, {"policy-config-file", false, apiserver},
		{"profiling", true, apiserver},
	},
	// kubectl's global flags of Table 2.2 that kubeactor's client does not have; the
	// rest (--server, --kubeconfig, --context, --cluster, --user, --namespace, the
	// TLS and credential flags) are honoured.
	Kubectl: {
		{"api-version", false, "only the v1 API is served: every request uses v1"},
		{"match-server-version", true, "the versions are not compared: the server serves the v1 API to every client"},
		{"validate", true, "the server validates every object it is given; the client sends files as written"},
	},
}

// commonBookFlags are the book's logging flags (Table 4.1) that have no effect here;
// every component accepts them.
var commonBookFlags = []BookFlag{
	{"log-flush-frequency", false, "every log entry is written at once"},
	{"log-backtrace-at", false, "no stack traces are logged"},
}

// BookFlags returns the flags the book prints for component that have no effect
// here, sorted by name.
func BookFlags(component string) []BookFlag {
	fs := append(append([]BookFlag(nil), bookFlags[component]...), commonBookFlags...)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	return fs
}

// BookArgs rewrites a component's command line (flags already in the '-' spelling)
// into kubeactor's: renamed flags get kubeactor's names, and flags of bookFlags
// that the command does not have (known tells) are taken out, each with a warning.
// The book's `--help=false` (kubectl's Table 2.2 prints it so) is taken out: it asks
// for no help.
// Everything else is left for the command's parser, which reports what it does not
// know. Nothing after a bare "--" is touched.
func BookArgs(component string, args []string, known func(name string) bool) ([]string, []Warning) {
	renames := bookRenames[component]
	ignored := map[string]BookFlag{}
	for _, f := range BookFlags(component) {
		ignored[f.Name] = f
	}
	out := make([]string, 0, len(args))
	var warns []Warning
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "--") {
			out = append(out, a)
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		if name == "help" && hasValue && isFalse(value) {
			continue
		}
		if to, ok := renames[name]; ok && !known(name) {
			name = to
			a = "--" + to
			if hasValue {
				a += "=" + value
			}
		}
		if reason, ok := bookFirstOf[component][name]; ok && known(name) {
			if !hasValue && i+1 < len(args) {
				i++
				value, hasValue = args[i], true
			}
			if first, _, list := strings.Cut(value, ","); list {
				value = first
				warns = append(warns, Warning{Flag: "--" + name, Reason: reason})
			}
			if hasValue {
				a = "--" + name + "=" + value
			}
		}
		f, ok := ignored[name]
		if !ok || known(name) {
			out = append(out, a)
			continue
		}
		if !hasValue && !f.Bool && i+1 < len(args) {
			i++ // its value
		}
		warns = append(warns, Warning{Flag: "--" + name, Reason: f.Reason})
	}
	return out, warns
}

// isFalse tells whether a boolean flag's value says false, as Go's flag package reads it.
func isFalse(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && !b
}
