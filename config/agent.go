package config

import (
	"fmt"
	"net/url"
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
	Server                    string        `name:"server" aliases:"api-servers" default:"http://127.0.0.1:8080" help:"URL of the API server (the kubelet's --api-servers)."`
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
}

// Validate reports the first invalid setting.
func (a *Agent) Validate() error {
	u, err := url.Parse(a.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server %q: want http://host:port", a.Server)
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
	if a.StatsInterval < 0 {
		return fmt.Errorf("--stats-interval %s: must not be negative", a.StatsInterval)
	}
	return nil
}
