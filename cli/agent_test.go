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
		{"docker agent not built", []string{"kubeactor", "agent"}, 1, "the Docker node agent is not built yet; use --simulate N"},
		{"bad node count", []string{"kubeactor", "agent", "--simulate=-2"}, 2, "--simulate -2"},
		{"underscore flags", []string{"kubeactor", "agent", "--simulate=1", "--capacity_memory=lots"}, 2, "--capacity-memory"},
		{"bad server", []string{"kubeactor", "agent", "--simulate=1", "--api_servers=localhost"}, 2, "--server"},
		{"help", []string{"kubeactor", "agent", "--help"}, 0, ""},
	}
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
