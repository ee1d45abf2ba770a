package e2e

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the e2e tests, then searches the logs of every process the run
// started for every secret value a test registered (RegisterSecret): a value found
// fails the run, naming the test that used it and the log file, never the value.
func TestMain(m *testing.M) {
	code := m.Run()
	report, ok := checkRunLogs()
	if report != "" {
		fmt.Fprintln(os.Stderr, report)
	}
	if !ok && code == 0 {
		code = 1
	}
	os.Exit(code)
}
