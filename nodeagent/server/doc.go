// Package server is the node agent's HTTP server (the kubelet's port 10250): pods,
// stats, machine spec, container logs, exec, port-forward and run. It reads the
// agent through Host and the engine through runtime.Runtime; it decides nothing
// about pods and writes nothing to the API server.
package server
