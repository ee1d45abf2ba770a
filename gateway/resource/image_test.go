package resource

import (
	"strings"
	"testing"
)

func TestParseImageRef(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		in   string
		want imageRef
		ok   bool
	}{
		{"nginx", imageRef{Name: "nginx"}, true},
		{"nginx:1.25", imageRef{Name: "nginx", Tag: "1.25"}, true},
		{"library/nginx:latest", imageRef{Name: "library/nginx", Tag: "latest"}, true},
		{"registry.local:5000/team/app", imageRef{Name: "registry.local:5000/team/app"}, true},
		{"registry.local:5000/team/app:v2", imageRef{Name: "registry.local:5000/team/app", Tag: "v2"}, true},
		{"Registry.Local/app", imageRef{Name: "Registry.Local/app"}, true},
		{"nginx@" + digest, imageRef{Name: "nginx", Digest: digest}, true},
		{"nginx:1@" + digest, imageRef{Name: "nginx", Tag: "1", Digest: digest}, true},
		{"", imageRef{}, false},
		{"Nginx", imageRef{}, false},
		{"nginx:", imageRef{}, false},
		{"nginx:bad tag", imageRef{}, false},
		{"nginx@sha256:short", imageRef{}, false},
		{"a//b", imageRef{}, false},
		{strings.Repeat("a", 64), imageRef{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseImageRef(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("parseImageRef(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzParseImageRef checks that parsing never panics and that a parsed
// reference renders back to its input.
func FuzzParseImageRef(f *testing.F) {
	for _, s := range []string{"nginx", "nginx:1.25", "registry:5000/a/b:c", "nginx@sha256:0123456789abcdef0123456789abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, ok := parseImageRef(s)
		if !ok {
			if ref != (imageRef{}) {
				t.Fatalf("failed parse returned %+v", ref)
			}
			return
		}
		back := ref.Name
		if ref.Tag != "" {
			back += ":" + ref.Tag
		}
		if ref.Digest != "" {
			back += "@" + ref.Digest
		}
		if back != s {
			t.Fatalf("parseImageRef(%q) = %+v renders as %q", s, ref, back)
		}
		// The pull-policy default agrees with the parse.
		if always := defaultPullAlways(s); always != (ref.Tag == "latest" || ref.Tag == "" && ref.Digest == "") {
			t.Fatalf("defaultPullAlways(%q) = %v for %+v", s, always, ref)
		}
	})
}
