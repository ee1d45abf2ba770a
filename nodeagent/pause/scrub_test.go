package pause

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fill makes dir hold a file, a dot-file, a dot-directory and a nested directory.
func fill(t *testing.T, dir string) {
	t.Helper()
	for _, p := range []string{"a.txt", ".hidden", ".dotdir/x", "sub/deeper/y"} {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMainModes: scrub empties a directory and keeps it; delete removes a tree,
// and a missing path is already deleted; bad arguments are refused with a line on
// stderr.
func TestMainModes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     func(root string) []string
		code     int
		stderr   string
		dirLeft  bool // root/vol exists afterwards
		entries  int  // entries left in root/vol when it exists
		filledUp bool
	}{
		{name: "scrub", args: func(r string) []string { return []string{Scrub, filepath.Join(r, "vol")} }, filledUp: true, dirLeft: true},
		{name: "scrub empty", args: func(r string) []string { return []string{Scrub, filepath.Join(r, "vol")} }, dirLeft: true},
		{name: "scrub missing", args: func(r string) []string { return []string{Scrub, filepath.Join(r, "nope")} }, code: 1, stderr: "pause: scrub: ", dirLeft: true},
		{name: "delete", args: func(r string) []string { return []string{Delete, filepath.Join(r, "vol")} }, filledUp: true},
		{name: "delete missing", args: func(r string) []string { return []string{Delete, filepath.Join(r, "nope")} }, dirLeft: true},
		{name: "relative", args: func(string) []string { return []string{Delete, "vol"} }, code: 1, stderr: "refusing path", dirLeft: true, filledUp: true, entries: 4},
		{name: "root", args: func(string) []string { return []string{Scrub, "/"} }, code: 1, stderr: "refusing path", dirLeft: true},
		{name: "unknown mode", args: func(r string) []string { return []string{"shred", r} }, code: 2, stderr: "usage: ", dirLeft: true, filledUp: true, entries: 4},
		{name: "too many", args: func(r string) []string { return []string{Scrub, r, r} }, code: 2, stderr: "usage: ", dirLeft: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			vol := filepath.Join(root, "vol")
			if err := os.Mkdir(vol, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.filledUp {
				fill(t, vol)
			}
			var stderr bytes.Buffer
			if code := Main(tc.args(root), &stderr); code != tc.code {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if tc.stderr == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want it to hold %q", stderr.String(), tc.stderr)
			}
			left, err := os.ReadDir(vol)
			switch {
			case !tc.dirLeft && !os.IsNotExist(err):
				t.Errorf("%s is still there (%v)", vol, err)
			case tc.dirLeft && err != nil:
				t.Errorf("%s is gone: %v", vol, err)
			case tc.dirLeft && len(left) != tc.entries:
				t.Errorf("%s holds %d entries, want %d", vol, len(left), tc.entries)
			}
		})
	}
}
