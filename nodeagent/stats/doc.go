// Package stats builds the kubelet's stats Summary (GET /stats/summary, the kubelet
// stats API v1alpha1 that metrics pipelines read): the node's CPU and memory from
// /proc, and each pod's containers from the engine's one-shot stats, collected
// periodically by a Collector that keeps the last two samples of each container so
// that the CPU rate (usageNanoCores) needs no second request. Building the Summary
// from samples is pure (summary.go); the Collector does the I/O.
package stats
