package cli

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/config"
)

// bookCommonFlags are Table 4.1's logging flags, printed for every component.
var bookCommonFlags = []string{
	"--log-backtrace-at=:0", "--log-dir=/var/log/kubernetes", "--log_dir=/var/log/kubernetes",
	"--log-flush-frequency=5s", "--logtostderr=true", "--alsologtostderr=false", "--stderrthreshold=2",
	"--v=0", "--v=2", "--vmodule=gfs*=2,test*=4", "--version=false",
}

// bookComponentFlags are the flags the digests print for each component (Tables
// 4.2 to 4.6, the env files, the unit files and the book's examples), each with a
// value of the book's.
var bookComponentFlags = map[string][]string{
	config.APIServer: {
		"--address=0.0.0.0", "--port=8080", "--insecure-bind-address=0.0.0.0", "--insecure-port=8080",
		"--bind-address=0.0.0.0", "--secure-port=6443", "--public-address-override=0.0.0.0", "--advertise-address=10.0.0.1",
		"--profiling=true", "--admission-control=AlwaysAdmit", "--admission_control=NamespaceAutoProvision,LimitRanger,SecurityContextDeny",
		"--admission-control-config-file=/etc/kubernetes/admission", "--allow-privileged=false", "--allow_privileged=false",
		"--api-burst=200", "--api-prefix=/api", "--api-rate=10",
		"--authorization-mode=AlwaysAllow", "--authorization_mode=ABAC", "--authorization-policy-file=/root/policy", "--authorization_policy_file=/root/policy",
		"--basic-auth-file=/root/basic_auth_file", "--basic_auth_file=/root/basic_auth_file", "--cert-dir=/var/run/kubernetes",
		"--client-ca-file=/var/run/kubernetes/ca.crt", "--client_ca_file=/var/run/kubernetes/ca.crt",
		"--cloud-config=/etc/cloud.conf", "--cloud-provider=gce", "--cluster-name=kubernetes", "--cors-allowed-origins=.*",
		"--etcd-config=/etc/etcd.conf", "--etcd-prefix=/registry", "--etcd-servers=http://10.0.0.1:4001,http://10.0.0.2:4001",
		"--etcd_servers=http://127.0.0.1:4001", "--event-ttl=1h0m0s", "--external-hostname=master", "--httptest.serve=:8081",
		"--kubelet-certificate-authority=/ca.crt", "--kubelet-client-certificate=/c.crt", "--kubelet-client-key=/c.key",
		"--kubelet-https=true", "--kubelet-port=10250", "--kubelet_port=10250", "--kubelet-timeout=5s",
		"--long-running-request-regexp=(/|^)((watch|proxy)(/|$)|(logs|portforward|exec)/?$)", "--master-service-namespace=default",
		"--max-requests-inflight=400", "--min-request-timeout=1800", "--old-etcd-prefix=/old", "--runtime-config=api/v1",
		"--service-account-key-file=/var/run/kubernetes/server.key", "--service-account-lookup=false",
		"--service-cluster-ip-range=10.254.0.0/16", "--service-node-port-range=30000-32767", "--ssh-keyfile=/k", "--ssh-user=u",
		"--storage-version=v1", "--tls-cert-file=/var/run/kubernetes/server.crt", "--tls-private-key-file=/var/run/kubernetes/server.key",
		"--token-auth-file=/root/token_auth_file", "--token_auth_file=/root/token_auth_file",
	},
	config.ControllerManager: {
		"--port=10252", "--address=127.0.0.1", "--master=http://kubernetes-master:8080", "--kubeconfig=/etc/kubernetes/cmkubeconfig",
		"--cloud-provider=gce", "--cloud-config=/etc/cloud.conf", "--concurrent-endpoint-syncs=5", "--concurrent_rc_syncs=5",
		"--concurrent-rc-syncs=5", "--service-sync-period=5m", "--node-sync-period=10s", "--resource-quota-sync-period=10s",
		"--namespace-sync-period=5m", "--pvclaimbinder-sync-period=10s", "--register-retry-count=10",
		"--node-monitor-grace-period=40s", "--node-startup-grace-period=60s", "--node-monitor-period=5s",
		"--pod-eviction-timeout=5m", "--deleting-pods-qps=0.1", "--deleting-pods-burst=10",
		"--service-account-private-key-file=/k", "--service_account_private_key_file=/var/run/kubernetes/server.key",
		"--root-ca-file=/var/run/kubernetes/ca.crt", "--cluster-name=kubernetes", "--cluster-cidr=10.244.0.0/16",
		"--allocate-node-cidrs=false", "--profiling=true", "--httptest.serve=:8081",
		"--terminated-pod-gc-threshold=12500", "--terminated_pod_gc_threshold=100",
	},
	config.Scheduler: {
		"--address=127.0.0.1", "--port=10251", "--algorithm-provider=DefaultProvider", "--kubeconfig=/k",
		"--master=http://kubernetes-master:8080", "--policy-config-file=/etc/kubernetes/policy.json", "--profiling=true",
	},
	config.Kubelet: {
		"--address=0.0.0.0", "--port=10250", "--hostname_override=node1", "--hostname-override=node1",
		"--api_servers=http://kubernetes-master:8080", "--api-servers=http://kubernetes-master:8080", "--apiservers=http://kubernetes-master:8080",
		"--api-servers=http://10.0.0.1:8080,http://10.0.0.2:8080",
		"--master=http://kubernetes-master:8080",
		"--pod_infra_container_image=docker.intranet.com:5000/google_containers/pause:latest", "--pod-infra-container-image=gcr.io/google_containers/pause:0.8.0",
		"--enable-server=true", "--enable-debugging-handlers=true", "--read-only-port=10255", "--cadvisor-port=4194",
		"--log-cadvisor-usage=false", "--healthz-bind-address=127.0.0.1", "--healthz-port=10248", "--allow-privileged=false",
		"--allow_privileged=false", "--cert-dir=/var/run/kubernetes", "--chaos-chance=0", "--cloud-config=/c", "--cloud-provider=gce",
		"--cloud_provider=gce", "--cluster-dns=10.254.0.10", "--cluster_dns=20.1.0.100", "--cluster-domain=cluster.local",
		"--cluster_domain=cluster.local", "--config=/etc/kubernetes/manifests", "--configure-cbr0=false",
		"--container-hints=/etc/cadvisor/container_hints.json", "--container-runtime=docker", "--containerized=false",
		"--docker-endpoint=unix:///var/run/docker.sock", "--docker-exec-handler=native", "--docker-only=false",
		"--docker-root=/var/lib/docker", "--docker-run=/var/run/docker", "--event-storage-age-limit=default=24h",
		"--event-storage-event-limit=default=100000", "--manifest-url=http://x/pods", "--file-check-frequency=20s",
		"--http-check-frequency=20s", "--sync-frequency=10s", "--google-json-key=/k.json", "--host-network-sources=file",
		"--httptest.serve=:8081", "--image-gc-high-threshold=90", "--image-gc-low-threshold=80",
		"--kubeconfig=/var/lib/kubelet/kubeconfig", "--low-diskspace-threshold-mb=256", "--master-service-namespace=default",
		"--max-pods=40", "--maximum-dead-containers=100", "--maximum-dead-containers-per-container=2",
		"--minimum-container-ttl-duration=1m0s", "--network-plugin=docker", "--node-status-update-frequency=10s",
		"--oom-score-adj=-900", "--pod-cidr=10.244.1.0/24", "--really-crash-for-testing=false", "--register-node=true",
		"--registry-qps=0", "--registry-burst=10", "--resource-container=/kubelet", "--system-container=/system",
		"--root-dir=/var/lib/kubelet", "--runonce=false", "--streaming-connection-idle-timeout=0",
		"--tls-cert-file=/c.crt", "--tls-private-key-file=/c.key",
	},
	config.KubeProxy: {
		"--bind-address=0.0.0.0", "--healthz-bind-address=127.0.0.1", "--healthz-port=10249",
		"--kubeconfig=/var/lib/kubeproxy/proxykubeconfig", "--master=https://kubernetes-master:443", "--oom-score-adj=-899",
		"--proxy-port-range=30000-31000", "--resource-container=/kube-proxy", "--proxy-mode=iptables", "--hostname-override=node1",
	},
}

// parseAs parses args as the program prog would, without running the command: the
// component, the warnings and the parse error.
func parseAs(t *testing.T, prog string, args []string) (known map[string]bool, warns []config.Warning, err error) {
	t.Helper()
	var cli root
	parser, err := kong.New(&cli, kong.Name(prog), kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	_, argv, warns := bookCommandLine(prog, normalizeFlags(args), parser.Model)
	_, err = parser.Parse(reorder(argv, flagArity(parser.Model), passthroughAt(parser.Model)))
	return commandFlags(parser.Model, commandOf(argv, flagArity(parser.Model))), warns, err
}

// TestBookFlagsAccepted runs every flag the book prints through its component: each
// is honoured (the command has it; its value may still be refused) or taken out with
// a warning.
func TestBookFlagsAccepted(t *testing.T) {
	for component, flags := range bookComponentFlags {
		for _, flag := range append(append([]string(nil), flags...), bookCommonFlags...) {
			t.Run(component+" "+flag, func(t *testing.T) {
				name, _, _ := strings.Cut(strings.TrimPrefix(normalizeFlags([]string{flag})[0], "--"), "=")
				if component == config.ControllerManager || component == config.Scheduler {
					var out, errOut bytes.Buffer
					if code := insideAPIServer(component, []string{"--log-dir=" + t.TempDir(), flag}, &out, &errOut); code != 0 {
						t.Fatalf("without --master: exit %d, stderr %q", code, errOut.String())
					}
					args := []string{flag}
					switch name { // honoured: the file must exist
					case "policy-config-file":
						args = []string{"--policy-config-file=" + writePolicy(t)}
					case "service-account-private-key-file":
						args = []string{"--service_account_private_key_file=" + writeKey(t)}
					case "root-ca-file":
						args = []string{"--root-ca-file=" + writeTestFile(t, "ca.crt", "CA")}
					}
					if _, _, exit, err := parseMember(component, args, &out, &errOut); exit >= 0 || err != nil {
						t.Fatalf("as a member: exit %d, %v, stderr %q", exit, err, errOut.String())
					}
					return
				}
				known, warns, err := parseAs(t, component, []string{flag})
				warned := false
				for _, w := range warns {
					warned = warned || w.Flag == "--"+name
				}
				switch {
				case warned && err != nil:
					t.Fatalf("warned about, then refused: %v", err)
				case warned:
				case known[name] || name == "address" || name == "port" || name == "master" || name == "apiservers" || name == "public-address-override": // renamed
					if err != nil && strings.Contains(err.Error(), "unknown flag") {
						t.Fatalf("honoured flag refused: %v", err)
					}
				default:
					t.Fatalf("neither honoured nor warned about (err %v)", err)
				}
			})
		}
	}
}

// bookKubectlLines are the kubectl command lines the digests print (ch1-2 §3.6's
// Table 2.2 of global flags, each on `get pods`; ch3-5 §9's every command and flag),
// with the book's values.
var bookKubectlLines = [][]string{
	{"get", "pods", "--api-version=v1"}, {"get", "pods", "--cluster=kubernetes-cluster"}, {"get", "pods", "--context=ctx-dev"},
	{"get", "pods", "--kubeconfig=/root/.kube/config"}, {"get", "pods", "--match-server-version=false"}, {"get", "pods", "--namespace=development"},
	{"get", "pods", "-s", "http://kubernetes-master:8080"}, {"get", "pods", "--server=http://kubernetes-master:8080"},
	{"get", "pods", "--certificate-authority=/var/run/kubernetes/ca.crt"}, {"get", "pods", "--client-certificate=/c.crt"},
	{"get", "pods", "--client-key=/c.key"}, {"get", "pods", "--insecure-skip-tls-verify=false"},
	{"get", "pods", "--password=thomas"}, {"get", "pods", "--token=1kjqweroiuou"}, {"get", "pods", "--user=dev"}, {"get", "pods", "--username=thomas"},
	{"get", "pods", "--help=false"}, {"get", "pods", "--validate=false"},
	{"get", "nodes", "--server=https://kubernetes-master:443", "--api-version=v1", "--username=thomas", "--password=thomas", "--insecure-skip-tls-verify=true"},
	{"create", "-f", "redis-master-controller.yaml"}, {"create", "-f", "limits.yaml", "--namespace=myspace"}, {"create", "-f", "x.yaml", "--validate"},
	{"replace", "-f", "unschedule_node.yaml"}, {"update", "-f", "unschedule_node.yaml"},
	{"patch", "node", "kubernetes-minion1", "-p", `{"spec": {"unschedulable": true}}`},
	{"get", "pods", "-lrole"}, {"get", "pods", "-l=name=cassandra"}, {"get", "pods", "-o", "wide"}, {"get", "pods", "-o", "json"},
	{"get", "pods", "kube-dns-v8-iknnc", "--namespace=kube-system", "-o", "yaml"}, {"get", "serviceaccounts", "--all-namespaces"},
	{"describe", "quota", "quota-development", "--namespace=development"},
	{"scale", "rc", "redis-slave", "--replicas=3"}, {"scale", "--replicas=3", "replicationcontrollers", "foo"},
	{"label", "pod", "redis-master-bobr0", "role=master", "--overwrite"}, {"label", "pod", "redis-master-bobr0", "role-"},
	{"rolling-update", "redis-master", "-f", "redis-master-controller-v2.yaml"}, {"rolling-update", "redis-master", "--image=redis-master:2.0"},
	{"rolling-update", "redis-master", "--image=kubeguide/redis-master:2.0", "--rollback"},
	{"rolling-update", "redis-master", "--image=redis-master:2.0", "--deployment-label-key=deployment", "--update-period=1m0s", "--poll-interval=3s", "--timeout=5m0s", "--dry-run=false"},
	{"logs", "redis-master-bobr0"}, {"logs", "redis-master-bobr0", "-c", "master"},
	{"exec", "busybox", "--", "nslookup", "redis-master"}, {"exec", "kube-dns-v8-5tpm2", "-c", "etcd", "--namespace=kube-system", "etcdctl", "ls"},
	{"exec", "-ti", "cassandra", "--", "nodetool", "status"},
	{"config", "set-cluster", "kubernetes-cluster", "--server=https://192.168.1.128:8080"},
	{"config", "set-context", "ctx-dev", "--namespace=development", "--cluster=kubernetes-cluster", "--user=dev"},
	{"config", "view"}, {"config", "use-context", "ctx-dev"}, {"namespace", "myspace"},
	{"stop", "rc", "redis-master"}, {"expose", "rc", "redis-master", "--port=6379"}, {"run", "nginx", "--image=nginx"},
	{"port-forward", "redis-master-bobr0", "6379:6379"}, {"proxy", "--port=8001"}, {"cluster-info"}, {"api-versions"}, {"version"},
}

// TestBookKubectlFlags runs every kubectl command line the digests print, and each of
// Table 2.2's logging flags, through the kubectl link's parser: each is accepted,
// its flags honoured or warned about.
func TestBookKubectlFlags(t *testing.T) {
	lines := append([][]string(nil), bookKubectlLines...)
	for _, f := range bookCommonFlags {
		if f != "--version=false" { // `kubectl version` is a command, and --version the flag of the others
			lines = append(lines, []string{"get", "pods", f})
		}
	}
	for _, line := range lines {
		t.Run(strings.Join(line, " "), func(t *testing.T) {
			if _, _, err := parseAs(t, config.Kubectl, line); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

func TestBookFlagsRefused(t *testing.T) {
	tests := []struct {
		name string
		prog string
		args []string
	}{
		{"no release had it", config.APIServer, []string{"--etcd-servers-overrides-typo=x"}},
		{"another component's flag", config.KubeProxy, []string{"--etcd_servers=http://127.0.0.1:4001"}},
		{"kubelet takes no apiserver flag", config.Kubelet, []string{"--service-cluster-ip-range=10.254.0.0/16"}},
		{"kubectl takes no component flag", config.Kubectl, []string{"get", "pods", "--etcd-servers=x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := parseAs(t, tt.prog, tt.args); err == nil || !strings.Contains(err.Error(), "unknown flag") {
				t.Fatalf("err %v, want unknown flag", err)
			}
		})
	}
	var out, errOut bytes.Buffer
	if code := insideAPIServer(config.Scheduler, []string{"--concurrent-rc-syncs=5"}, &out, &errOut); code != 2 {
		t.Fatalf("kube-scheduler --concurrent-rc-syncs: exit %d, want 2", code)
	}
	for _, tc := range []struct {
		prog string
		args []string
	}{
		{config.Scheduler, []string{"--master=http://127.0.0.1:8080", "--concurrent-rc-syncs=5"}},
		{config.Scheduler, []string{"--master=http://127.0.0.1:8080", "--terminated-pod-gc-threshold=5"}},
		{config.ControllerManager, []string{"--master=http://127.0.0.1:8080", "--policy-config-file=/p.json"}},
	} {
		if _, _, _, err := parseMember(tc.prog, tc.args, &out, &errOut); err == nil || !strings.Contains(err.Error(), "unknown flag") {
			t.Errorf("%s %v: %v, want unknown flag", tc.prog, tc.args, err)
		}
	}
}

// TestMemberFlags: kube-scheduler and kube-controller-manager honour --master and
// their own flags as members, and warn about the book's that have no effect.
func TestMemberFlags(t *testing.T) {
	policy, key, ca := writePolicy(t), writeKey(t), writeTestFile(t, "ca.crt", "CA")
	tests := []struct {
		prog   string
		args   []string
		role   string
		check  func(memberSpec) bool
		warned string
	}{
		{config.Scheduler, []string{"--master=http://m:8080", "--policy_config_file=" + policy, "--algorithm-provider=DefaultProvider"},
			actors.RoleScheduler, func(s memberSpec) bool { return s.common.Master == "http://m:8080" && len(s.policy) > 0 }, "--algorithm-provider"},
		{config.ControllerManager, []string{"--master=http://m:8080", "--terminated_pod_gc_threshold=100", "--node-monitor-grace-period=20s",
			"--node_monitor_period=1s", "--pod-eviction-timeout=1m", "--deleting-pods-qps=2", "--deleting-pods-burst=3",
			"--node-startup-grace-period=30s", "--resource-quota-sync-period=5s",
			"--service_account_private_key_file=" + key, "--root-ca-file=" + ca, "--cluster-cidr=10.244.0.0/16"},
			actors.RoleControllers, func(s memberSpec) bool {
				return s.common.Master == "http://m:8080" && s.podGC == 100 && s.quotaSync == 5*time.Second &&
					s.nodes == config.NodeController{NodeMonitorGracePeriod: 20 * time.Second, NodeStartupGracePeriod: 30 * time.Second,
						NodeMonitorPeriod: time.Second, PodEvictionTimeout: time.Minute, DeletingPodsQPS: 2, DeletingPodsBurst: 3} &&
					s.accounts != nil && s.accounts.Tokens != nil && string(s.accounts.RootCA) == "CA"
			}, "--cluster-cidr"},
		{config.ControllerManager, []string{"--master=http://m:8080", "--profiling=true"},
			actors.RoleControllers, func(s memberSpec) bool {
				return s.nodes.NodeMonitorGracePeriod == 40*time.Second && s.nodes.PodEvictionTimeout == 5*time.Minute &&
					s.accounts != nil && s.accounts.Tokens == nil
			}, "--profiling"},
	}
	for _, tc := range tests {
		t.Run(tc.prog, func(t *testing.T) {
			var out, errOut bytes.Buffer
			spec, warns, exit, err := parseMember(tc.prog, tc.args, &out, &errOut)
			if exit >= 0 || err != nil {
				t.Fatalf("exit %d, %v", exit, err)
			}
			if spec.role != tc.role || !tc.check(spec) {
				t.Errorf("spec %+v (common %+v)", spec, *spec.common)
			}
			if len(warns) != 1 || warns[0].Flag != tc.warned {
				t.Errorf("warnings %+v, want one about %s", warns, tc.warned)
			}
		})
	}
}

// TestMemberFlagErrors: kube-controller-manager refuses values its controllers
// cannot run with, before it joins anything.
func TestMemberFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no key file", []string{"--service-account-private-key-file=" + filepath.Join(t.TempDir(), "none")}, "--service-account-private-key-file"},
		{"not a key", []string{"--service-account-private-key-file=" + writeTestFile(t, "k", "not a key")}, "no private key"},
		{"no CA file", []string{"--root-ca-file=" + filepath.Join(t.TempDir(), "none")}, "--root-ca-file"},
		{"zero grace period", []string{"--node-monitor-grace-period=0s"}, "must be positive"},
		{"negative quota sync", []string{"--resource-quota-sync-period=-1s"}, "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			_, _, exit, err := parseMember(config.ControllerManager, append([]string{"--master=http://m:8080"}, tc.args...), &out, &errOut)
			if exit >= 0 || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("exit %d, err %v; want an error about %q", exit, err, tc.want)
			}
		})
	}
}

func writePolicy(t *testing.T) string {
	t.Helper()
	return writeTestFile(t, "policy.json", `{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"PodFitsResources"}],"priorities":[{"name":"LeastRequestedPriority","weight":1}]}`)
}

// writeKey writes a new EC private key (PEM), as --service-account-private-key-file
// takes one.
func writeKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return writeTestFile(t, "sa.key", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})))
}

func writeTestFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBookCommandLine(t *testing.T) {
	tests := []struct {
		name      string
		prog      string
		args      []string
		component string
		want      []string
		warned    []string
	}{
		{"book's apiserver line", config.APIServer,
			[]string{"--logtostderr=true", "--v=0", "--etcd-servers=http://127.0.0.1:4001", "--address=0.0.0.0", "--port=8080", "--kubelet-port=10250", "--allow-privileged=false", "--service-cluster-ip-range=10.254.0.0/16"},
			config.APIServer,
			[]string{"server", "--allow-members", "--logtostderr=true", "--v=0", "--insecure-bind-address=0.0.0.0", "--insecure-port=8080", "--allow-privileged=false", "--service-cluster-ip-range=10.254.0.0/16"},
			[]string{"--etcd-servers", "--kubelet-port"}},
		{"kubeactor server takes the same", "kubeactor", []string{"server", "--etcd-servers", "http://127.0.0.1:4001", "--port=8080"},
			config.APIServer, []string{"server", "--insecure-port=8080"}, []string{"--etcd-servers"}},
		{"kubelet", config.Kubelet, []string{"--master=http://m:8080", "--containerized"},
			config.Kubelet, []string{"agent", "--proxy-mode=none", "--server=http://m:8080"}, []string{"--containerized"}},
		{"kubelet's list of API servers: the agent's server list", config.Kubelet, []string{"--api-servers", "http://a:8080,http://b:8080"},
			config.Kubelet, []string{"agent", "--proxy-mode=none", "--api-servers", "http://a:8080,http://b:8080"}, nil},
		{"kubelet's one API server", config.Kubelet, []string{"--api-servers", "http://a:8080"},
			config.Kubelet, []string{"agent", "--proxy-mode=none", "--api-servers", "http://a:8080"}, nil},
		{"kube-proxy", config.KubeProxy, []string{"--master=http://m:8080", "--oom-score-adj=-899"},
			config.KubeProxy, []string{"proxy", "--proxy-mode=userspace", "--master=http://m:8080"}, []string{"--oom-score-adj"}},
		{"kubectl proxy is not kube-proxy", "kubeactor", []string{"proxy", "--port=8001"}, "", []string{"proxy", "--port=8001"}, nil},
		{"kubectl: the book's logging flags", config.Kubectl, []string{"get", "pods", "--log-flush-frequency=5s", "--v=2"}, "", []string{"get", "pods", "--v=2"}, []string{"--log-flush-frequency"}},
		{"kubectl: Table 2.2's flags it does not have", config.Kubectl, []string{"--api-version=v1", "get", "nodes", "--match-server-version", "--validate=false", "--help=false"},
			"", []string{"get", "nodes"}, []string{"--api-version", "--match-server-version", "--validate"}},
		{"kubeactor's client commands take kubectl's flags", "kubeactor", []string{"create", "-f", "x.yaml", "--validate"}, "", []string{"create", "-f", "x.yaml"}, []string{"--validate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cli root
			parser, err := kong.New(&cli)
			if err != nil {
				t.Fatal(err)
			}
			component, got, warns := bookCommandLine(tt.prog, tt.args, parser.Model)
			if component != tt.component || strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("got %q %q, want %q %q", component, got, tt.component, tt.want)
			}
			var flags []string
			for _, w := range warns {
				flags = append(flags, w.Flag)
			}
			if strings.Join(flags, " ") != strings.Join(tt.warned, " ") {
				t.Fatalf("warned %q, want %q", flags, tt.warned)
			}
		})
	}
}

func TestProgramName(t *testing.T) {
	tests := []struct{ name, arg0, want string }{
		{"link in a bin dir", "/usr/bin/kube-apiserver", config.APIServer},
		{"bare", "kubelet", config.Kubelet},
		{"kubectl", "/usr/local/bin/kubectl", config.Kubectl},
		{"kubeactor", "/work/bin/kubeactor", "kubeactor"},
		{"unknown name", "/tmp/kube-apiserver-old", "kubeactor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := programName(tt.arg0); got != tt.want {
				t.Fatalf("programName(%q) = %q, want %q", tt.arg0, got, tt.want)
			}
		})
	}
}

// TestInsideAPIServer: kube-controller-manager's book line exits 0 with one line
// that names the flags to give kube-apiserver, written to its glog-named file.
func TestInsideAPIServer(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := insideAPIServer(config.ControllerManager, []string{"--logtostderr=false", "--v=4", "--master=http://kubernetes-master:8080",
		"--log_dir=" + dir, "--node-monitor-grace-period=20s"}, &out, &errOut)
	if code != 0 || errOut.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "kube-controller-manager.INFO"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	if strings.Count(log, "\n") != 1 || !strings.Contains(log, "run inside kube-apiserver") ||
		!strings.Contains(log, "give-kube-apiserver=--node-monitor-grace-period") || !strings.Contains(log, "no-effect=--master") {
		t.Fatalf("log %q", log)
	}
}
