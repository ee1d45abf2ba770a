package cli

import (
	"bytes"
	"strings"
	"testing"
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
