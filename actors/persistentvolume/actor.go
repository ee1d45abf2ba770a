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
// volume's phase (DecideVolume) and reclaims it once its claim is gone.
type VolumeController struct {
	control.Base
	failed int64 // the revision whose write failed: it is retried by its timer only
}

var _ control.Controller = (*VolumeController)(nil)

// NewVolumeController returns the controller of one volume.
func NewVolumeController() control.Controller { return &VolumeController{} }

// Settle syncs a volume whose phase may be out of date.
func (c *VolumeController) Settle(fx control.Effects) {
	pv, ok := fx.Object().(*corev1.PersistentVolume)
	if ok && fx.Revision() != c.failed && !DecideVolume(pv, claimOf(fx, pv)).empty() {
		fx.QueueSync()
	}
}

// Sync writes the volume's next state, or deletes it.
func (c *VolumeController) Sync(fx control.Effects) {
	pv, ok := fx.Object().(*corev1.PersistentVolume)
	if !ok {
		return
	}
	plan := DecideVolume(pv, claimOf(fx, pv))
	switch {
	case plan.Delete:
		fx.Log().Info("reclaim policy Delete: deleting the released volume")
		if err := fx.Remove(); err != nil {
			fx.Log().WithField("error", err).Warn("delete released volume")
			c.retry(fx)
		}
	case plan.Volume != nil:
		if err := fx.Write(plan.Volume); err != nil {
			fx.Log().WithField("error", err).Warn("write volume")
			c.retry(fx)
			return
		}
		if plan.Volume.Status.Phase == corev1.VolumeFailed {
			fx.Record(plan.Volume, corev1.EventTypeWarning, plan.Volume.Status.Reason, plan.Volume.Status.Message)
		}
	}
}

// retry syncs again in a second, not at once: the write that failed would fail again.
func (c *VolumeController) retry(fx control.Effects) {
	c.failed = fx.Revision()
	fx.SyncAt(fx.Now().Add(time.Second))
}

func (p VolumePlan) empty() bool { return p.Volume == nil && !p.Delete }

// claimOf reads the claim pv's claimRef names, or nil.
func claimOf(fx control.Effects, pv *corev1.PersistentVolume) *corev1.PersistentVolumeClaim {
	ref := pv.Spec.ClaimRef
	if ref == nil || !fx.Serves("persistentvolumeclaims") {
		return nil
	}
	c, _ := fx.Get(control.Ref{Resource: "persistentvolumeclaims", Namespace: ref.Namespace, Name: ref.Name}).(*corev1.PersistentVolumeClaim)
	return c
}
