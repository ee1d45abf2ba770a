package actors

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/actors/scheduler"
	"github.com/kubeactor/kubeactor/persistence"
)

// Messages of the scheduler actor and its shard actors.

// schedInput is what a scheduler input goroutine read from the store: a snapshot of
// one resource (every object stored at one revision; what it lacks is gone) or a
// batch of change-log events after it.
type schedInput struct {
	resource string
	snapshot bool
	items    []*persistence.Item // with snapshot
	events   []persistence.Event // without
}

// shardNodes gives a shard actor the nodes it bids on from now on. The NodeInfos
// belong to the scheduler's cache: the shard only reads them while it answers a
// bidRequest, when the scheduler changes nothing.
type shardNodes struct{ nodes []*scheduler.NodeInfo }

// bidRequest asks a shard for its decision about one pod over its nodes. The pod, its
// context and the changed nodes are shared read-only by every shard.
type bidRequest struct {
	seq     uint64 // the round
	shard   int
	pod     *corev1.Pod
	ctx     *scheduler.PodContext
	changed []*scheduler.NodeInfo // NodeInfos changed since the previous round
}

// bidReply answers a bidRequest: the shard's best nodes and its rejections by reason.
type bidReply struct {
	seq      uint64
	shard    int
	decision scheduler.Decision
}

// schedRetry tells the scheduler that a pod's backoff may have ended.
type schedRetry struct{}

// schedExpire tells the scheduler to drop assumptions whose binding never showed up.
type schedExpire struct{}

// schedNext gives the scheduler another turn to decide pods (localDecisions).
type schedNext struct{}

// schedFlush tells the scheduler that its event budget may have tokens for the event
// occurrences it holds.
type schedFlush struct{}
