package config

import (
	"strings"
	"testing"
	"time"
)

func validAgent() Agent {
	return Agent{
		Server: "http://127.0.0.1:8080", Simulate: 3, NamePrefix: "sim", NodeStatusUpdateFrequency: 10 * time.Second,
		CapacityCPU: "4", CapacityMemory: "16Gi", MaxPods: 110, KubeAPIQPS: 1000, KubeAPIBurst: 2000, Workers: 32,
		StatsInterval: time.Minute, Address: "0.0.0.0", Port: 10250, ReadOnlyPort: 10255, HealthzPort: 10248, HealthzBindAddress: "127.0.0.1", PodInfraContainerImage: "kubeactor/pause:latest",
		SyncFrequency: 10 * time.Second, MaxDeadContainersPerContainer: 2, MaxDeadContainers: 100,
		FileCheckFrequency: 20 * time.Second, ClusterDomain: "cluster.local", GCPeriod: time.Minute, MinimumImageTTL: 2 * time.Minute, NetworkPlugin: "docker", ProxyMode: "iptables", BridgeName: "kbr0", ClusterCIDR: "10.244.0.0/16",
		RegisterNode: true, HTTPCheckFrequency: 20 * time.Second, ImageGCHighThreshold: 90, ImageGCLowThreshold: 80,
	}
}

func TestAgentValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Agent)
		wantErr string // "" for valid
	}{
		{"defaults", func(*Agent) {}, ""},
		{"docker agent (no simulate) parses", func(a *Agent) { a.Simulate = 0 }, ""},
		{"https server", func(a *Agent) { a.Server = "https://master:6443" }, ""},
		{"milli cpu", func(a *Agent) { a.CapacityCPU = "3500m" }, ""},
		{"most nodes", func(a *Agent) { a.Simulate = 39936 }, ""},
		{"server without scheme", func(a *Agent) { a.Server = "127.0.0.1:8080" }, "--server"},
		{"server ftp", func(a *Agent) { a.Server = "ftp://x" }, "--server"},
		{"too many nodes", func(a *Agent) { a.Simulate = 39937 }, "--simulate 39937"},
		{"negative nodes", func(a *Agent) { a.Simulate = -1 }, "--simulate -1"},
		{"bad prefix", func(a *Agent) { a.NamePrefix = "Sim_Nodes" }, "--name-prefix"},
		{"empty prefix", func(a *Agent) { a.NamePrefix = "" }, "--name-prefix"},
		{"frequency too short", func(a *Agent) { a.NodeStatusUpdateFrequency = time.Millisecond }, "--node-status-update-frequency"},
		{"bad cpu", func(a *Agent) { a.CapacityCPU = "four" }, "--capacity-cpu"},
		{"zero memory", func(a *Agent) { a.CapacityMemory = "0" }, "--capacity-memory"},
		{"no pods", func(a *Agent) { a.MaxPods = 0 }, "--max-pods"},
		{"burst with qps", func(a *Agent) { a.KubeAPIBurst = 0 }, "--kube-api-burst"},
		{"no workers", func(a *Agent) { a.Workers = 0 }, "--workers"},
		{"node name", func(a *Agent) { a.NodeName = "node-1.example" }, ""},
		{"bad node name", func(a *Agent) { a.NodeName = "Node_1" }, "--node-name"},
		{"bad node ip", func(a *Agent) { a.NodeIP = "10.0.0" }, "--node-ip"},
		{"bad address", func(a *Agent) { a.Address = "localhost" }, "--address"},
		{"port too big", func(a *Agent) { a.Port = 70000 }, "--port"},
		{"free port", func(a *Agent) { a.Port = 0 }, ""},
		{"read-only port too big", func(a *Agent) { a.ReadOnlyPort = 65536 }, "--read-only-port"},
		{"read-only port off", func(a *Agent) { a.ReadOnlyPort = 0 }, ""},
		{"healthz port negative", func(a *Agent) { a.HealthzPort = -1 }, "--healthz-port"},
		{"healthz bind address not an IP", func(a *Agent) { a.HealthzBindAddress = "localhost" }, "--healthz-bind-address"},
		{"healthz off, no address needed", func(a *Agent) { a.HealthzPort, a.HealthzBindAddress = 0, "" }, ""},
		{"no pause image", func(a *Agent) { a.PodInfraContainerImage = "" }, "--pod-infra-container-image"},
		{"sync too often", func(a *Agent) { a.SyncFrequency = time.Millisecond }, "--sync-frequency"},
		{"negative dead per container", func(a *Agent) { a.MaxDeadContainersPerContainer = -1 }, "--maximum-dead-containers-per-container"},
		{"unlimited dead", func(a *Agent) { a.MaxDeadContainers = -1 }, ""},
		{"file check too often", func(a *Agent) { a.FileCheckFrequency = 0 }, "--file-check-frequency"},
		{"cluster dns", func(a *Agent) { a.ClusterDNS = "10.254.0.10" }, ""},
		{"trace sampling in range", func(a *Agent) { a.Tracing, a.TraceSampling = true, 0.25 }, ""},
		{"trace sampling above 1", func(a *Agent) { a.TraceSampling = 1.5 }, "--trace-sampling"},
		{"trace sampling negative", func(a *Agent) { a.TraceSampling = -0.1 }, "--trace-sampling"},
		{"bad cluster dns", func(a *Agent) { a.ClusterDNS = "dns" }, "--cluster-dns"},
		{"bad cluster domain", func(a *Agent) { a.ClusterDomain = "Cluster_Local" }, "--cluster-domain"},
		{"bad cluster cidr", func(a *Agent) { a.ClusterCIDR = "10.244.0.0" }, "--cluster-cidr"},
		{"long bridge name", func(a *Agent) { a.BridgeName = "a-very-long-bridge" }, "--bridge-name"},
		{"negative stats interval", func(a *Agent) { a.StatsInterval = -time.Second }, "--stats-interval"},
		{"manifest url", func(a *Agent) { a.ManifestURL = "http://config.example/pods.yaml" }, ""},
		{"manifest url not http", func(a *Agent) { a.ManifestURL = "file:///etc/pods" }, "--manifest-url"},
		{"http check too often", func(a *Agent) { a.HTTPCheckFrequency = 0 }, "--http-check-frequency"},
		{"image gc off", func(a *Agent) { a.ImageGCHighThreshold, a.ImageGCLowThreshold = 100, 100 }, ""},
		{"image gc high above 100", func(a *Agent) { a.ImageGCHighThreshold = 101 }, "--image-gc-high-threshold"},
		{"image gc low negative", func(a *Agent) { a.ImageGCLowThreshold = -1 }, "--image-gc-low-threshold"},
		{"image ttl below a second", func(a *Agent) { a.MinimumImageTTL = time.Millisecond }, "--minimum-image-ttl-duration"},
		{"image gc low above high", func(a *Agent) { a.ImageGCHighThreshold, a.ImageGCLowThreshold = 70, 80 }, "must not be above"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validAgent()
			tt.change(&a)
			err := a.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate = %v, want an error about %s", err, tt.wantErr)
			}
		})
	}
}
