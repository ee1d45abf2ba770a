// Package testenv reads the sizes that tests and benchmarks take from the
// environment (KUBEACTOR_ENVELOPE_PODS and the like).
package testenv

import (
	"os"
	"strconv"
	"testing"
)

// PositiveInt is the positive integer in the environment variable name, or def when
// it is unset; anything else fails t.
func PositiveInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
