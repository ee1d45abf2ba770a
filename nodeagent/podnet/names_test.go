package podnet

import (
	"regexp"
	"testing"
)

func TestHostVethName(t *testing.T) {
	valid := regexp.MustCompile(`^veth[0-9a-f]{8}$`)
	tests := []struct {
		name string
		key  string
	}{
		{name: "namespace/name", key: "default/web-0"},
		{name: "uid", key: "6f1c2a8e-3b7d-4a0e-9f51-0c2d4e6a8b10"},
		{name: "empty", key: ""},
		{name: "long", key: "kube-system/a-very-long-pod-name-that-would-never-fit-in-fifteen-characters"},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HostVethName(tt.key)
			if !valid.MatchString(got) || len(got) > 15 {
				t.Fatalf("HostVethName(%q) = %q, want veth + 8 hex digits", tt.key, got)
			}
			if again := HostVethName(tt.key); again != got {
				t.Fatalf("HostVethName(%q) not deterministic: %q then %q", tt.key, got, again)
			}
			if other, ok := seen[got]; ok {
				t.Fatalf("HostVethName(%q) = HostVethName(%q) = %q", tt.key, other, got)
			}
			seen[got] = tt.key
		})
	}
}
