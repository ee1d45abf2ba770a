package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/types"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// collectGarbage removes, every GCPeriod: the containers and volumes of pods this
// node no longer runs (deleted while the agent was down), dead containers beyond
// --maximum-dead-containers-per-container and --maximum-dead-containers (once dead
// for --minimum-container-ttl-duration), then unused images when the disk is
// fuller than --image-gc-high-threshold.
func (a *Agent) collectGarbage(ctx context.Context) {
	t := time.NewTicker(a.cfg.GCPeriod)
	defer t.Stop()
	for {
		if err := a.gcOnce(ctx); err != nil && ctx.Err() == nil {
			a.log.WithError(err).Warn("garbage collection")
		}
		if err := a.collectImages(ctx); err != nil && ctx.Err() == nil {
			a.log.WithError(err).Warn("image collection")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// gcOnce is one garbage collection pass.
func (a *Agent) gcOnce(ctx context.Context) error {
	wanted, synced := a.wanted()
	if !synced {
		return nil
	}
	all, err := a.rt.ListContainers(ctx, map[string]string{labelNode: a.cfg.NodeName})
	if err != nil {
		return err
	}
	var live []runtime.Container
	for _, c := range all {
		uid := c.Labels[labelPodUID]
		if wanted[uid] || !c.Running() {
			live = append(live, c)
			continue
		}
		// A running container of a pod this node does not run: its pod was deleted
		// while the agent was away.
		a.log.WithField("container", c.Name).Info("stopping the container of a pod that is gone")
		if err := a.rt.StopContainer(ctx, c.ID, graceOf(c)); err != nil && !runtime.IsNotFound(err) {
			return err
		}
		if err := a.removeContainer(ctx, c.ID); err != nil && !runtime.IsNotFound(err) {
			return err
		}
	}
	for _, id := range podsync.DeadContainersToRemove(live, wanted, a.cfg.MaxDeadPerContainer, a.cfg.MaxDead, a.cfg.MinGCAge, a.now()) {
		if err := a.removeContainer(ctx, id); err != nil && !runtime.IsNotFound(err) {
			return err
		}
	}
	entries, _ := os.ReadDir(filepath.Join(a.cfg.RootDir, "pods"))
	for _, e := range entries {
		if !wanted[e.Name()] {
			if err := a.unmountVolumes(types.UID(e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// graceOf is the termination grace period a container was created with (the
// default grace when its label is missing).
func graceOf(c runtime.Container) time.Duration {
	if s, ok := c.Labels[podsync.LabelGracePeriod]; ok {
		if d, err := time.ParseDuration(s + "s"); err == nil {
			return d
		}
	}
	return time.Duration(podpkg.DefaultGrace) * time.Second
}
