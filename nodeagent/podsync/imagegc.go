package podsync

import (
	"cmp"
	"slices"
	"time"
)

// ImageRecord is what the agent knows of one local image for its collection.
type ImageRecord struct {
	ID        string
	Size      int64     // bytes
	FirstSeen time.Time // when the agent first saw the image
	LastUsed  time.Time // when a container last used it (FirstSeen if never)
}

// DiskUsage is the use of the filesystem holding the engine's images.
type DiskUsage struct {
	Used, Capacity uint64 // bytes
}

// Percent is the share of the filesystem in use, rounded down.
func (d DiskUsage) Percent() int {
	if d.Capacity == 0 {
		return 0
	}
	return int(d.Used * 100 / d.Capacity)
}

// ImagesToRemove chooses the images to remove when the filesystem's use reaches
// high percent (the kubelet's --image-gc-high-threshold; 100 or more: never): the
// unused images, least recently used first (then the larger, then by id), until
// the bytes they free bring the use down to low percent. An image in inUse (the
// infra image, the images of the containers) or seen for less than minAge (just
// pulled for a container about to start) is never chosen. It also returns how many
// bytes the collection wants freed beyond what the chosen images free (0 when they
// are enough).
func ImagesToRemove(images []ImageRecord, inUse map[string]bool, disk DiskUsage, high, low int, minAge time.Duration, now time.Time) ([]string, uint64) {
	if high >= 100 || disk.Capacity == 0 || disk.Percent() < high {
		return nil, 0
	}
	target := disk.Capacity * uint64(max(low, 0)) / 100
	if disk.Used <= target {
		return nil, 0
	}
	want := disk.Used - target
	var candidates []ImageRecord
	for _, im := range images {
		if inUse[im.ID] || now.Sub(im.FirstSeen) < minAge {
			continue
		}
		candidates = append(candidates, im)
	}
	slices.SortFunc(candidates, func(a, b ImageRecord) int {
		return cmp.Or(a.LastUsed.Compare(b.LastUsed), cmp.Compare(b.Size, a.Size), cmp.Compare(a.ID, b.ID))
	})
	var (
		out   []string
		freed uint64
	)
	for _, im := range candidates {
		if freed >= want {
			break
		}
		out = append(out, im.ID)
		freed += uint64(max(im.Size, 0))
	}
	if freed >= want {
		return out, 0
	}
	return out, want - freed
}
