// Package pause is the process of a pod's infra container when the agent built the
// infra image from its own binary: the binary run as /pause holds the pod's
// namespaces by waiting, reaps orphaned children (it is PID 1 in the pod's PID
// namespace), and exits 0 on SIGTERM or SIGINT. It is what images/pause does.
package pause

import (
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// Name is the program name (argv[0]'s base) the binary runs as the pause process
// under, and the path of the binary in the infra image it builds (/pause).
const Name = "pause"

// Is tells whether a program run as arg0 is the pause process.
func Is(arg0 string) bool { return filepath.Base(arg0) == Name }

// Run waits for SIGTERM or SIGINT, reaping children meanwhile, and returns the exit
// code (0). It writes one line to stderr when it stops.
func Run(stderr io.Writer) int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	return wait(sigs, stderr)
}

// wait handles the signals of sigs until one asks to stop.
func wait(sigs <-chan os.Signal, stderr io.Writer) int {
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		_, _ = io.WriteString(stderr, "pause: shutting down on "+sig.String()+"\n")
		return 0
	}
	return 0
}

// reap collects every exited child without blocking; one SIGCHLD may stand for
// several exits.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
