// Package scheduler is the scheduler's pure core: per-node aggregates (NodeInfo), the
// predicates and priorities of Kubernetes 1.0, policy files, bids and the decision
// among them, and the cache of nodes with assumed pods. It does no I/O, reads no
// clock, logs nothing and draws no random numbers; the actor wiring lives elsewhere.
package scheduler
