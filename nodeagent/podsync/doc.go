// Package podsync is the node agent's pure pod-sync core: container names, labels and
// hashes, the sync plan (what to kill, create and start), the pod status the engine
// state implies, container configs, the pod's DNS, environment, probe timing and
// state, dead-container GC, and the registry credentials of a pod's pull secrets.
// Pod-wide rules (grace, terminal) are actors/pod's.
// It does no I/O: no engine, network, files or clocks; time comes in as a value.
package podsync
