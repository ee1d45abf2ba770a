package scheduler

import corev1 "k8s.io/api/core/v1"

// Round is one decision about a pod in progress: the shards' answers as they come in,
// merged once every shard has answered.
type Round struct {
	Seq uint64      // tells this round's answers from a previous round's
	Key string      // the pod's PodKey
	Pod *corev1.Pod // as stored at Rev
	Rev int64       // the pod's revision: the binding's precondition
	Ctx *PodContext // the pod's context, shared read-only by the shards
	ds  []Decision  // by shard
	in  []bool      // by shard: answered
	due int         // shards yet to answer
}

// NewRound starts round seq about pod (key, stored at rev) over the given number of
// shards.
func NewRound(seq uint64, key string, pod *corev1.Pod, rev int64, ctx *PodContext, shards int) *Round {
	return &Round{Seq: seq, Key: key, Pod: pod, Rev: rev, Ctx: ctx,
		ds: make([]Decision, shards), in: make([]bool, shards), due: shards}
}

// Answer records a shard's decision and tells whether it was the last one due. An
// answer to another round, from an unknown shard or from a shard that answered
// already changes nothing.
func (r *Round) Answer(seq uint64, shard int, d Decision) (done bool) {
	if seq != r.Seq || shard < 0 || shard >= len(r.ds) || r.in[shard] || r.due == 0 {
		return false
	}
	r.ds[shard], r.in[shard] = d, true
	r.due--
	return r.due == 0
}

// Decision merges the shards' decisions in shard order, so that a seeded tieBreak
// gives the same outcome (see Merge). It is meant for a round every shard answered.
func (r *Round) Decision(tieBreak func(n int) int) Decision {
	if len(r.ds) == 0 {
		return Decision{Pod: r.Key}
	}
	d := r.ds[0]
	for _, x := range r.ds[1:] {
		d = Merge(d, x, tieBreak)
	}
	return d
}
