package kinds

import (
	"strings"
	"testing"
)

func TestDefaultPullAlways(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for _, tt := range []struct {
		image  string
		always bool
	}{
		{"nginx", true},
		{"nginx:latest", true},
		{"library/nginx:latest", true},
		{"nginx:1.25", false},
		{"registry.local:5000/team/app", true},
		{"registry.local:5000/team/app:v2", false},
		{"Registry.Local/app", true},
		{"nginx@" + digest, false},
		{"nginx:latest@" + digest, true},
		{"nginx:1@" + digest, false},
		// References that do not parse: validation answers them; the default is IfNotPresent.
		{"", false},
		{"Nginx", false},
		{"nginx:", false},
		{"nginx:bad tag", false},
		{"nginx@sha256:short", false},
		{"a//b", false},
		{strings.Repeat("a", 64), false},
	} {
		if got := defaultPullAlways(tt.image); got != tt.always {
			t.Errorf("defaultPullAlways(%q) = %v, want %v", tt.image, got, tt.always)
		}
	}
}
