// Package spans is the node agent's tracer: the spans of pod syncs, image pulls,
// container creates and starts and probe transitions, continuing the trace of the
// API server write that woke the agent, sent to that server in batches. It must
// never block a sync: spans the server cannot take in time are dropped.
package spans
