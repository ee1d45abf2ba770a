package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
	"github.com/sirupsen/logrus"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
	"github.com/kubeactor/kubeactor/nodeagent/sim"
)

// errNoDockerAgent is what `kubeactor agent` answers until the Docker agent exists.
var errNoDockerAgent = errors.New("the Docker node agent is not built yet; use --simulate N")

// agentCmd is the node agent; config.Agent's Validate runs while parsing.
type agentCmd struct {
	config.Agent
}

func (c *agentCmd) Run(g *globals) error {
	if c.Simulate == 0 {
		return errNoDockerAgent
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return simulate(ctx, c.Agent, g.log)
}

// simulate runs c.Simulate simulated nodes against c.Server until ctx ends.
func simulate(ctx context.Context, c config.Agent, log *logrus.Logger) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(c.CapacityCPU), // validated
		corev1.ResourceMemory: resource.MustParse(c.CapacityMemory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(c.MaxPods), resource.DecimalSI),
	}
	client, err := apiclient.New(apiclient.Options{
		Server:    c.Server,
		QPS:       c.KubeAPIQPS,
		Burst:     c.KubeAPIBurst,
		MaxConns:  c.Workers,
		UserAgent: "kubeactor-agent/" + Version,
	})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	s, err := sim.New(sim.Config{
		Nodes:           c.Simulate,
		NamePrefix:      c.NamePrefix,
		StatusFrequency: c.NodeStatusUpdateFrequency,
		Capacity:        capacity,
		KubeletVersion:  "v1.0.0-kubeactor",
		Workers:         c.Workers,
		StatsEvery:      c.StatsInterval,
	}, client, log)
	if err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	return s.Run(ctx)
}

// defaultAgent is the agent configuration with every flag at its default.
func defaultAgent() (config.Agent, error) {
	var a config.Agent
	parser, err := kong.New(&a)
	if err != nil {
		return a, err
	}
	_, err = parser.Parse(nil)
	return a, err
}
