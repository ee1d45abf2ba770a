// Package persistentvolume is the PersistentVolume and PersistentVolumeClaim kinds'
// own part: the binder's pure decisions (which volume a claim binds to, what a
// volume's phase is, what its reclaim policy does once its claim is gone), the
// controllers of both kinds that act on them. It is pure: it links no actor runtime
// and no store.
//
// Binding is a two-step protocol with one writer per step. A claim's actor picks a
// volume and claims it by updating the volume's spec.claimRef with the volume's
// resourceVersion as a precondition: the volume's actor applies one such update and
// refuses every other one made from the same revision, so among racing claims
// exactly one wins a volume and the losers pick again. Once the volume names it,
// the claim writes its own spec.volumeName and Bound status; the volume's actor
// moves its own phase to Bound.
//
// Reclaiming is the volume's own: once its claim is gone DecideVolume, given the
// volume, the claim and the volume's recycler pod as observed, plans the next step
// (Released; create the recycler pod that scrubs the volume or deletes its hostPath
// directory; once the pod finished, Available, Failed or the object deleted, and the
// pod deleted). The pod runs the infra image's pause program (nodeagent/pause) in its
// scrub or delete mode; a feed of pods wakes the volume when its pod changes.
package persistentvolume
