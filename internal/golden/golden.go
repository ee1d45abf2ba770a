// Package golden compares test output with the files under a package's testdata/
// that hold what it should be, and runs scenario files against such outputs. Run a package's tests with -rewrite to write those
// files from the output instead, then review the diff.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var rewrite = flag.Bool("rewrite", false, "write the golden files from the tests' output")

// Check compares got with the file at path, or writes it there under -rewrite.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *rewrite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -rewrite after checking):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// Scenarios runs every scenario file dir/NAME.yaml as a subtest: it decodes the file
// strictly into an S, gives it to run and checks run's output against
// dir/NAME+outSuffix. Files that end in outSuffix are outputs, not scenarios. A
// directory without scenarios fails t.
func Scenarios[S any](t *testing.T, dir, outSuffix string, run func(t *testing.T, sc S) []byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, in := range files {
		if strings.HasSuffix(in, outSuffix) {
			continue
		}
		ran++
		t.Run(strings.TrimSuffix(filepath.Base(in), ".yaml"), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var sc S
			if err := yaml.UnmarshalStrict(raw, &sc); err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			Check(t, strings.TrimSuffix(in, ".yaml")+outSuffix, run(t, sc))
		})
	}
	if ran == 0 {
		t.Fatalf("no scenarios in %s", dir)
	}
}

// YAML is v as YAML, for a scenario's output.
func YAML(t *testing.T, v any) []byte {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
