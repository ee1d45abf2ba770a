package persistentvolume

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
)

// SyncPeriod is how often a Pending claim looks for a volume again without any event
// (the book's --pvclaimbinder-sync-period, 10s in Kubernetes 1.0); the feeds make it
// look again as soon as a volume changes.
const SyncPeriod = 10 * time.Second

// ClaimController is a claim's controller (control.Controller): it binds the claim
// to a volume (DecideClaim), one volume update at a time.
type ClaimController struct {
	control.Base
	synced  int64 // the claim's revision at its last sync
	dirty   bool  // an answer came back: sync again
	noMatch bool  // the FailedBinding event was recorded for this pending spell
}

var _ control.Controller = (*ClaimController)(nil)

// NewClaimController returns the controller of one claim.
func NewClaimController() control.Controller { return &ClaimController{} }

// Settle syncs a claim that changed since its last sync, or whose volume update was
// answered.
func (c *ClaimController) Settle(fx control.Effects) {
	if fx.Outstanding() == 0 && (c.dirty || fx.Revision() != c.synced) {
		fx.QueueSync()
	}
}

// Sync asks DecideClaim for the next step and takes it.
func (c *ClaimController) Sync(fx control.Effects) {
	claim, ok := fx.Object().(*corev1.PersistentVolumeClaim)
	if !ok || fx.Outstanding() > 0 {
		return
	}
	c.synced, c.dirty = fx.Revision(), false
	if !fx.Serves("persistentvolumes") {
		return
	}
	var volumes []*corev1.PersistentVolume
	fx.Each("persistentvolumes", "", func(obj runtime.Object) bool {
		if pv, ok := obj.(*corev1.PersistentVolume); ok {
			volumes = append(volumes, pv)
		}
		return true
	})
	plan := DecideClaim(claim, volumes)
	switch {
	case plan.ClaimVolume != nil:
		cur := findVolume(volumes, plan.ClaimVolume.Name)
		if err := fx.Update("persistentvolumes", cur, plan.ClaimVolume); err != nil {
			fx.Log().WithField("error", err).Warn("claim volume")
			fx.SyncAt(fx.Now().Add(SyncPeriod))
		}
	case plan.Claim != nil:
		if err := fx.Write(plan.Claim); err != nil {
			fx.Log().WithField("error", err).Warn("write claim")
			fx.SyncAt(fx.Now().Add(time.Second))
			return
		}
		c.synced, c.noMatch = fx.Revision(), false
		if plan.Claim.Status.Phase == corev1.ClaimBound {
			fx.Log().WithField("volume", plan.Claim.Spec.VolumeName).Info("claim bound")
		}
	case plan.NoMatch:
		if !c.noMatch {
			c.noMatch = true
			fx.Record(claim, corev1.EventTypeNormal, ReasonFailedBinding, "no persistent volumes available for this claim")
		}
		fx.SyncAt(fx.Now().Add(SyncPeriod))
	}
}

// Answered looks again once a volume update is answered: a won volume is now named
// by its claimRef, a lost one (a conflict: another claim got there first) is no
// longer free.
func (c *ClaimController) Answered(fx control.Effects, a control.Answer) {
	c.dirty = true
	if a.Err != nil {
		fx.Log().WithField("error", a.Err).Debug("volume update refused")
	}
}

func findVolume(volumes []*corev1.PersistentVolume, name string) *corev1.PersistentVolume {
	for _, pv := range volumes {
		if pv.Name == name {
			return pv
		}
	}
	return nil
}

// VolumeController is a volume's controller (control.Controller): it keeps the
// volume's phase and reclaims it once its claim is gone (DecideVolume), running its
// recycler pod.
type VolumeController struct {
	control.Base
	opts   RecyclerOptions
	failed int64 // the revision whose write failed: it is retried by its timer only
	dirty  bool  // an answer about the recycler pod came back: look again
}

var _ control.Controller = (*VolumeController)(nil)

// NewVolumeController returns the controller of one volume, whose recycler pods
// are made with opts.
func NewVolumeController(opts RecyclerOptions) control.Controller {
	return &VolumeController{opts: opts}
}

// Settle syncs a volume whose phase may be out of date, or whose recycler pod's
// create or delete was answered.
func (c *VolumeController) Settle(fx control.Effects) {
	pv, ok := fx.Object().(*corev1.PersistentVolume)
	if !ok || fx.Outstanding() > 0 {
		return
	}
	if c.dirty || fx.Revision() != c.failed && !c.decide(fx, pv).empty() {
		fx.QueueSync()
	}
}

// decide is DecideVolume of the volume as stored, its claim and its recycler pod.
func (c *VolumeController) decide(fx control.Effects, pv *corev1.PersistentVolume) VolumePlan {
	return DecideVolume(pv, claimOf(fx, pv), c.recyclerOf(fx, pv), c.opts)
}

// Sync takes the volume's next step: deletes its finished or stale recycler pod,
// writes the volume's next state or deletes it, or creates the recycler pod.
func (c *VolumeController) Sync(fx control.Effects) {
	pv, ok := fx.Object().(*corev1.PersistentVolume)
	if !ok || fx.Outstanding() > 0 {
		return
	}
	c.dirty = false
	plan := c.decide(fx, pv)
	if plan.Volume != nil {
		if err := fx.Write(plan.Volume); err != nil {
			fx.Log().WithField("error", err).Warn("write volume")
			c.retry(fx)
			return
		}
		if st := plan.Volume.Status; st.Phase == corev1.VolumeFailed {
			fx.Record(plan.Volume, corev1.EventTypeWarning, st.Reason, st.Message)
		} else if pv.Spec.ClaimRef != nil && plan.Volume.Spec.ClaimRef == nil && plan.DeletePod {
			fx.Log().Info("reclaim policy Recycle: the volume was scrubbed and is Available again")
		}
	}
	if plan.DeletePod {
		fx.Delete(c.recyclerRef(pv), false)
	}
	switch {
	case plan.Delete:
		fx.Log().Info("reclaim policy Delete: deleting the released volume")
		if err := fx.Remove(); err != nil {
			fx.Log().WithField("error", err).Warn("delete released volume")
			c.retry(fx)
		}
	case plan.CreatePod != nil:
		fx.Log().WithFields(map[string]any{"pod": plan.CreatePod.Namespace + "/" + plan.CreatePod.Name,
			"policy": pv.Spec.PersistentVolumeReclaimPolicy}).Info("reclaiming the released volume with a recycler pod")
		if err := fx.Create("pods", plan.CreatePod); err != nil {
			fx.Log().WithField("error", err).Warn("create recycler pod")
			c.retry(fx)
		}
	}
}

// Answered looks again once the recycler pod's create or delete is answered; a
// refused create is retried by the timer only.
func (c *VolumeController) Answered(fx control.Effects, a control.Answer) {
	if a.Err != nil && !a.Gone {
		fx.Log().WithFields(map[string]any{"pod": a.Ref.Namespace + "/" + a.Ref.Name, "error": a.Err}).Warn("recycler pod write refused")
		c.retry(fx)
		return
	}
	c.dirty = true
}

// Deleted deletes the recycler pod of a volume deleted while it was being reclaimed.
func (c *VolumeController) Deleted(fx control.Effects, last runtime.Object) {
	pv, ok := last.(*corev1.PersistentVolume)
	if !ok {
		return
	}
	if p := c.recyclerOf(fx, pv); p != nil && p.DeletionTimestamp == nil {
		fx.Delete(c.recyclerRef(pv), true)
	}
}

// retry syncs again in a second, not at once: the write that failed would fail again.
func (c *VolumeController) retry(fx control.Effects) {
	c.failed = fx.Revision()
	fx.SyncAt(fx.Now().Add(time.Second))
}

func (p VolumePlan) empty() bool {
	return p.Volume == nil && !p.Delete && p.CreatePod == nil && !p.DeletePod
}

func (c *VolumeController) recyclerRef(pv *corev1.PersistentVolume) control.Ref {
	return control.Ref{Resource: "pods", Namespace: c.opts.Namespace, Name: RecyclerName(pv.Name)}
}

// recyclerOf reads pv's recycler pod, or nil: a pod of that name that does not name
// pv in its annotation is someone else's.
func (c *VolumeController) recyclerOf(fx control.Effects, pv *corev1.PersistentVolume) *corev1.Pod {
	if !fx.Serves("pods") {
		return nil
	}
	p, _ := fx.Get(c.recyclerRef(pv)).(*corev1.Pod)
	if p == nil || p.Annotations[RecyclerVolumeAnnotation] != pv.Name {
		return nil
	}
	return p
}

// claimOf reads the claim pv's claimRef names, or nil.
func claimOf(fx control.Effects, pv *corev1.PersistentVolume) *corev1.PersistentVolumeClaim {
	ref := pv.Spec.ClaimRef
	if ref == nil || !fx.Serves("persistentvolumeclaims") {
		return nil
	}
	c, _ := fx.Get(control.Ref{Resource: "persistentvolumeclaims", Namespace: ref.Namespace, Name: ref.Name}).(*corev1.PersistentVolumeClaim)
	return c
}
