package kinds

import (
	"fmt"
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
		// The second answer comes from the memo: the same.
		for _, round := range []string{"parsed", "remembered"} {
			if got := defaultPullAlways(tt.image); got != tt.always {
				t.Errorf("%s: defaultPullAlways(%q) = %v, want %v", round, tt.image, got, tt.always)
			}
		}
	}
}

// The memo of pull policies stays bounded however many images come, and answers
// alike after it starts again.
func TestDefaultPullAlwaysMemoBounded(t *testing.T) {
	for i := range 2*maxPullPolicies + 10 {
		image := fmt.Sprintf("registry.local/app-%d:v%d", i, i%3)
		if defaultPullAlways(image) {
			t.Fatalf("defaultPullAlways(%q) = true, want false (a tag other than latest)", image)
		}
		if n := pullPolicies.len(); n > maxPullPolicies {
			t.Fatalf("%d images remembered, want at most %d", n, maxPullPolicies)
		}
	}
	if !defaultPullAlways("registry.local/app-1") {
		t.Error("an untagged image after the memo started again: want Always")
	}
}
