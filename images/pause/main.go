// Command pause is the pod infrastructure container's process: it holds the pod's
// network and IPC namespaces by waiting forever, reaps orphaned children (it is
// PID 1 in the pod's PID namespace), and exits 0 on SIGTERM or SIGINT. With
// `scrub DIR` or `delete PATH` it reclaims a PersistentVolume instead (the volume
// recycler's pods run it so). It is the same program the agent's own binary runs
// as /pause (package nodeagent/pause), and must stay tiny: no fmt, no logging
// beyond a line on stderr.
package main

import (
	"os"

	"github.com/kubeactor/kubeactor/nodeagent/pause"
)

func main() {
	os.Exit(pause.Main(os.Args[1:], os.Stderr))
}
