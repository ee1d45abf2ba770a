package podsync

import "testing"

func TestExpand(t *testing.T) {
	vars := map[string]string{"VAR": "value", "EMPTY": "", "A": "x"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(VAR)", "value"},
		{"pre-$(VAR)-post", "pre-value-post"},
		{"$(VAR)$(A)", "valuex"},
		{"$(EMPTY)x", "x"},
		{"$(MISSING)", "$(MISSING)"},
		{"$$(VAR)", "$(VAR)"},
		{"$$$(VAR)", "$value"},
		{"$$", "$"},
		{"$", "$"},
		{"a$b", "a$b"},
		{"$(VAR", "$(VAR"},
		{"$()", "$()"},
		{"$(VAR)$(", "value$("},
		{"100$", "100$"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Expand(tt.in, lookup); got != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzExpand(f *testing.F) {
	f.Add("$(VAR)$$($(")
	f.Fuzz(func(t *testing.T, s string) {
		// With nothing defined, only "$$" changes: expanding is then escaping undone.
		none := func(string) (string, bool) { return "", false }
		got := Expand(s, none)
		if len(got) > len(s) {
			t.Errorf("Expand(%q) = %q grew without variables", s, got)
		}
	})
}
