// Package poll waits in tests: it looks again and again until a condition holds or
// a deadline passes, never sleeping for a fixed time in the hope that it does.
package poll

import (
	"errors"
	"testing"
	"time"
)

// interval is the time between two looks.
const interval = 10 * time.Millisecond

// Until calls check until it returns nil; when timeout passes first it fails t with
// what and check's last error.
func Until(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		<-tick.C
	}
}

// UntilTrue is Until for a condition that has no error to tell.
func UntilTrue(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Until(t, timeout, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

var errNotYet = errors.New("not yet")

// For looks at cond until it holds (true) or timeout passes (false). It fails no
// test, so a goroutine other than the test's may wait with it.
func For(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}
