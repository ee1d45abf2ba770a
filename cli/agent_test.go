package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/nodeagent/kubelet"
)

func TestAgentCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no docker engine", []string{"kubeactor", "agent", "--port=0"}, 1, "cannot reach the Docker engine (is dockerd running? without Docker, use --simulate N"},
		{"bad node ip", []string{"kubeactor", "agent", "--node_ip=10.0.0"}, 2, "--node-ip"},
		{"bad node count", []string{"kubeactor", "agent", "--simulate=-2"}, 2, "--simulate -2"},
		{"underscore flags", []string{"kubeactor", "agent", "--simulate=1", "--capacity_memory=lots"}, 2, "--capacity-memory"},
		{"bad server", []string{"kubeactor", "agent", "--simulate=1", "--api_servers=localhost"}, 2, "--server"},
		{"help", []string{"kubeactor", "agent", "--help"}, 0, ""},
	}
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock") // no engine here
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tt.args, &out, &errOut)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Fatalf("stderr %q does not mention %q", errOut.String(), tt.wantErr)
			}
		})
	}
}

// TestDockerAgentFlags: the node agent's flags reach its configuration, in both
// spellings, with their defaults.
func TestDockerAgentFlags(t *testing.T) {
	parse := func(args ...string) kubelet.Config {
		t.Helper()
		var a config.Agent
		parser, err := kong.New(&a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.Parse(normalizeFlags(args)); err != nil {
			t.Fatal(err)
		}
		cfg, err := dockerAgentConfig(a)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	def := parse("--node-ip=10.0.0.1")
	if def.NoRegister || def.MaxPods != 110 || def.ManifestURL != "" || def.HTTPCheckFrequency != 20*time.Second ||
		*def.ImageGC != (kubelet.ImageGCPolicy{High: 90, Low: 80, MinAge: 2 * time.Minute}) || def.MinGCAge != time.Minute {
		t.Errorf("defaults %+v %+v", def, *def.ImageGC)
	}
	got := parse("--node-ip=10.0.0.1", "--register_node=false", "--max_pods=40", "--manifest_url=http://cfg/pods",
		"--http-check-frequency=5s", "--image_gc_high_threshold=70", "--image-gc-low-threshold=50", "--minimum_container_ttl_duration=10s", "--minimum-image-ttl-duration=30s")
	if !got.NoRegister || got.MaxPods != 40 || got.ManifestURL != "http://cfg/pods" || got.HTTPCheckFrequency != 5*time.Second ||
		*got.ImageGC != (kubelet.ImageGCPolicy{High: 70, Low: 50, MinAge: 30 * time.Second}) || got.MinGCAge != 10*time.Second {
		t.Errorf("set %+v %+v", got, *got.ImageGC)
	}
	if parse("--node-ip=10.0.0.1", "--register-node").NoRegister {
		t.Error("--register-node alone turned registration off")
	}
}
