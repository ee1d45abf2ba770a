// Package podsync is the node agent's pure pod-sync core: container names, labels and
// hashes, the sync plan (what to kill, create and start), the pod status the engine
// state implies, container configs, environment, probe state and dead-container GC.
// It does no I/O: no engine, network, files or clocks; time comes in as a value.
package podsync
