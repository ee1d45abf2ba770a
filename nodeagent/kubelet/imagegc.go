package kubelet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// ImageGCPolicy is when the agent removes unused images: when the use of the
// filesystem holding the engine's data root reaches High percent, down to Low.
type ImageGCPolicy struct {
	High, Low int
	MinAge    time.Duration // an image seen for less than this is kept (0: imageMinAge)
	// Scope, when set, limits the collection to images with a tag beginning with
	// it; every other image is kept as if in use (tests on a shared engine).
	Scope string
}

// outOfScope tells whether the policy's scope leaves im alone.
func (p *ImageGCPolicy) outOfScope(im runtime.Image) bool {
	if p.Scope == "" {
		return false
	}
	for _, tag := range im.Tags {
		if strings.HasPrefix(tag, p.Scope) {
			return false
		}
	}
	return true
}

// imageMinAge keeps an image the agent has just seen (pulled for a container about
// to start, or present when the agent started) from being collected at once.
const imageMinAge = 2 * time.Minute

// imageSeen is the agent's memory of one image, kept across collections.
type imageSeen struct{ first, lastUsed time.Time }

// collectImages is one image collection pass: it records which images the
// engine's containers use, and removes unused ones as podsync.ImagesToRemove
// chooses when the disk is fuller than the policy allows.
func (a *Agent) collectImages(ctx context.Context) error {
	p := a.cfg.ImageGC
	images, ok := a.rt.(runtime.Images)
	if p == nil || p.High >= 100 || !ok || a.engineRoot == "" {
		return nil
	}
	list, err := images.ListImages(ctx)
	if err != nil {
		return err
	}
	containers, err := a.rt.ListContainers(ctx, nil) // every container of the engine
	if err != nil {
		return err
	}
	now := a.now()
	inUse := map[string]bool{}
	for _, c := range containers {
		inUse[c.ImageID] = true
	}
	if id, err := a.rt.InspectImage(ctx, a.cfg.PauseImage); err == nil {
		inUse[id] = true
	}
	names := map[string]string{}
	records := make([]podsync.ImageRecord, 0, len(list))
	present := map[string]bool{}
	for _, im := range list {
		present[im.ID] = true
		if p.outOfScope(im) {
			inUse[im.ID] = true
		}
		seen, ok := a.imagesSeen[im.ID]
		if !ok {
			seen = imageSeen{first: now, lastUsed: now}
		}
		if inUse[im.ID] {
			seen.lastUsed = now
		}
		a.imagesSeen[im.ID] = seen
		records = append(records, podsync.ImageRecord{ID: im.ID, Size: im.Size, FirstSeen: seen.first, LastUsed: seen.lastUsed})
		names[im.ID] = strings.Join(im.Tags, ",")
	}
	for id := range a.imagesSeen {
		if !present[id] {
			delete(a.imagesSeen, id)
		}
	}
	disk, err := diskUsage(a.engineRoot)
	if err != nil {
		return fmt.Errorf("image collection: disk use of %s: %w", a.engineRoot, err)
	}
	minAge := p.MinAge
	if minAge == 0 {
		minAge = imageMinAge
	}
	remove, short := podsync.ImagesToRemove(records, inUse, disk, p.High, p.Low, minAge, now)
	if len(remove) == 0 && short == 0 {
		return nil
	}
	log := a.log.WithFields(logrus.Fields{"disk-use": fmt.Sprintf("%d%%", disk.Percent()), "high": p.High, "low": p.Low})
	for _, id := range remove {
		if err := images.RemoveImage(ctx, id); err != nil && !runtime.IsNotFound(err) {
			log.WithError(err).WithField("image", id).Warn("image collection: removing an unused image")
			continue
		}
		delete(a.imagesSeen, id)
		log.WithFields(logrus.Fields{"image": id, "tags": names[id]}).Info("image collection: removed an unused image")
	}
	if short > 0 {
		log.WithField("short-bytes", short).Warn("image collection: removing every unused image does not bring the disk use down to the low threshold")
	}
	return nil
}

// diskUsage is the use of the filesystem holding path.
func diskUsage(path string) (podsync.DiskUsage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return podsync.DiskUsage{}, err
	}
	capacity := st.Blocks * uint64(st.Bsize)
	avail := st.Bavail * uint64(st.Bsize)
	return podsync.DiskUsage{Used: capacity - min(avail, capacity), Capacity: capacity}, nil
}
