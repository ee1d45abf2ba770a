// Command pause is the pod infrastructure container's process: it holds the pod's
// network and IPC namespaces by waiting forever, reaps orphaned children (it is
// PID 1 in the pod's PID namespace), and exits 0 on SIGTERM or SIGINT.
// It must stay tiny: no fmt, no logging beyond a line on stderr.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Stderr.WriteString("pause: shutting down on " + sig.String() + "\n")
		os.Exit(0)
	}
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
