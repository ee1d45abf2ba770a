// Package golden compares test output with the files under a package's testdata/
// that hold what it should be. Run a package's tests with -rewrite to write those
// files from the output instead, then review the diff.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
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
