// Package scheduler is the scheduler's pure core: per-node aggregates (NodeInfo), the
// predicates and priorities of Kubernetes 1.0, policy files, bids and the decision
// among them, the cache of nodes with assumed pods, Shard, which decides pods of a
// recurring class by re-bidding only the nodes that changed, the Queue of pending pods
// with their backoff, the EventBudget of the scheduler's event writes, and the
// decision record a binding carries. It does no I/O, reads no clock, logs nothing and
// draws no random numbers (ties are broken by a hash of the pod's name, TieBreak);
// the actor wiring lives elsewhere.
package scheduler
