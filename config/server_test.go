package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubeactor/kubeactor/actors/admission"
)

func validServer() Server {
	return Server{
		DataDir: "/tmp/x", InsecureBindAddress: "127.0.0.1", InsecurePort: 8080, ChangeLogWindow: 100000,
		RequestTimeout: 1e9, MaxRequestBodyBytes: 3 << 20, EventTTL: 3600e9,
		NodeController: NodeController{NodeMonitorGracePeriod: 40e9, NodeStartupGracePeriod: 60e9, NodeMonitorPeriod: 5e9, PodEvictionTimeout: 300e9,
			DeletingPodsQPS: 0.1, DeletingPodsBurst: 10}, ServiceClusterIPRange: "10.254.0.0/16", ServiceNodePortRange: "30000-32767",
		GCPercent: 400, GCMinPercent: 40, GCHeadroom: "256Mi", MemoryLimit: "0", ClusterDNS: "10.254.0.10", ClusterDomain: "cluster.local", DNSPort: 53,
		AllocateNodeCIDRs: true, ClusterCIDR: "10.244.0.0/16", NodeCIDRMaskSize: 24,
	}
}

// serverCase is one Validate test: a change to validServer, the error it must cause
// ("" for valid) and a check of the filled defaults.
type serverCase struct {
	name    string
	change  func(*Server)
	wantErr string // "" for valid
	check   func(*Server) string
}

func TestServerValidateDNSAndCIDRs(t *testing.T) {
	runServerCases(t, []serverCase{
		{name: "defaults", change: func(*Server) {}, check: func(s *Server) string {
			if s.DNSAddress() != "127.0.0.1:53" {
				return "dns address " + s.DNSAddress()
			}
			return ""
		}},
		{name: "dns bind address", change: func(s *Server) { s.DNSBindAddress = "0.0.0.0"; s.DNSPort = 10053 }, check: func(s *Server) string {
			if s.DNSAddress() != "0.0.0.0:10053" {
				return "dns address " + s.DNSAddress()
			}
			return ""
		}},
		{name: "dns disabled", change: func(s *Server) { s.DNSPort = 0 }},
		{name: "domain normalised", change: func(s *Server) { s.ClusterDomain = "Cluster.Local." }, check: func(s *Server) string {
			if s.ClusterDomain != "cluster.local" {
				return "domain " + s.ClusterDomain
			}
			return ""
		}},
		{name: "dns port negative", change: func(s *Server) { s.DNSPort = -1 }, wantErr: "--dns-port"},
		{name: "dns port too large", change: func(s *Server) { s.DNSPort = 65536 }, wantErr: "--dns-port"},
		{name: "bad dns bind address", change: func(s *Server) { s.DNSBindAddress = "localhost" }, wantErr: "--dns-bind-address"},
		{name: "bad domain", change: func(s *Server) { s.ClusterDomain = "under_score" }, wantErr: "--cluster-domain"},
		{name: "empty domain", change: func(s *Server) { s.ClusterDomain = "" }, wantErr: "--cluster-domain"},
		{name: "cluster dns not an IP", change: func(s *Server) { s.ClusterDNS = "dns" }, wantErr: "--cluster-dns"},
		{name: "cluster dns outside the range", change: func(s *Server) { s.ClusterDNS = "10.0.0.10" }, wantErr: "--cluster-dns"},
		{name: "cluster dns is the network", change: func(s *Server) { s.ClusterDNS = "10.254.0.0" }, wantErr: "--cluster-dns"},
		{name: "cluster dns is the kubernetes service's", change: func(s *Server) { s.ClusterDNS = "10.254.0.1" }, wantErr: "--cluster-dns"},
		{name: "cluster dns is the broadcast", change: func(s *Server) { s.ClusterDNS = "10.254.255.255" }, wantErr: "--cluster-dns"},
		{name: "cluster dns follows the range", change: func(s *Server) { s.ServiceClusterIPRange = "10.0.0.0/24"; s.ClusterDNS = "10.0.0.10" }},
		{name: "other cluster cidr", change: func(s *Server) { s.ClusterCIDR = "172.20.0.0/14"; s.NodeCIDRMaskSize = 26 }},
		{name: "bad cluster cidr", change: func(s *Server) { s.ClusterCIDR = "10.244.0.0" }, wantErr: "--cluster-cidr"},
		{name: "mask larger than cluster", change: func(s *Server) { s.NodeCIDRMaskSize = 8 }, wantErr: "--node-cidr-mask-size"},
		{name: "mask too small", change: func(s *Server) { s.NodeCIDRMaskSize = 31 }, wantErr: "--node-cidr-mask-size"},
		{name: "cluster cidr overlaps services", change: func(s *Server) { s.ClusterCIDR = "10.254.128.0/17" }, wantErr: "overlaps"},
		{name: "admission plugins in order", change: func(s *Server) {
			s.AdmissionControl = []string{"NamespaceAutoProvision", "LimitRanger", "SecurityContextDeny"}
		}},
		{name: "no admission plugins", change: func(s *Server) { s.AdmissionControl = nil }},
		{name: "unknown admission plugin", change: func(s *Server) { s.AdmissionControl = []string{"NamespaceLifecycle", "Bogus"} },
			wantErr: `--admission-control: admission: unknown plugin "Bogus" (known: AlwaysAdmit, AlwaysDeny,`},
		{name: "bad cluster cidr ignored when not allocating", change: func(s *Server) { s.AllocateNodeCIDRs = false; s.ClusterCIDR = "x" }},
	})
}

func runServerCases(t *testing.T, tests []serverCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validServer()
			tt.change(&s)
			err := s.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate = %v, want an error about %s", err, tt.wantErr)
			}
			if tt.check != nil {
				if msg := tt.check(&s); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// TestDefaultPlugins: the server's --admission-control default is the chain the
// actors call the default (admission.DefaultPlugins), and every name is known.
func TestDefaultPlugins(t *testing.T) {
	f, ok := reflect.TypeOf(Server{}).FieldByName("AdmissionControl")
	if !ok {
		t.Fatal("no AdmissionControl field")
	}
	if got, want := f.Tag.Get("default"), strings.Join(admission.DefaultPlugins, ","); got != want {
		t.Fatalf("--admission-control default %q, want admission.DefaultPlugins %q", got, want)
	}
	if err := admission.Check(admission.DefaultPlugins); err != nil {
		t.Fatal(err)
	}
}
