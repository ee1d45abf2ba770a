// Package metrics is the node agent's Prometheus metrics (kubelet_* and prober_*):
// a registry of the agent's own, the instruments the Docker agent and the simulated
// nodes update, and the handler of GET /metrics. It must not know how pods are run.
package metrics
