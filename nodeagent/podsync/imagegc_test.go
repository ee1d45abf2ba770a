package podsync

import (
	"strings"
	"testing"
	"time"
)

func TestImagesToRemove(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	const mb = 1 << 20
	images := []ImageRecord{
		{ID: "old", Size: 300 * mb, FirstSeen: ago(time.Hour), LastUsed: ago(50 * time.Minute)},
		{ID: "older", Size: 100 * mb, FirstSeen: ago(time.Hour), LastUsed: ago(55 * time.Minute)},
		{ID: "recent", Size: 500 * mb, FirstSeen: ago(time.Hour), LastUsed: ago(time.Minute)},
		{ID: "pause", Size: 1 * mb, FirstSeen: ago(time.Hour), LastUsed: ago(time.Hour)},
		{ID: "running", Size: 900 * mb, FirstSeen: ago(time.Hour), LastUsed: ago(2 * time.Hour)},
		{ID: "just-pulled", Size: 800 * mb, FirstSeen: ago(10 * time.Second), LastUsed: ago(10 * time.Second)},
	}
	inUse := map[string]bool{"pause": true, "running": true}
	disk := func(usedMB uint64) DiskUsage { return DiskUsage{Used: usedMB * mb, Capacity: 10000 * mb} }
	tests := []struct {
		name      string
		disk      DiskUsage
		high, low int
		want      string
		short     uint64
	}{
		{"below high: nothing", disk(8999), 90, 80, "", 0},
		{"at high: down to low, least recently used first", disk(9000), 90, 89, "older", 0},
		{"more to free: the next ones", disk(9300), 90, 90, "older,old", 0},
		{"not enough unused images: all of them, and the shortfall", disk(9500), 90, 80, "older,old,recent", 1500*mb - 900*mb},
		{"100 disables", disk(10000), 100, 0, "", 0},
		{"unknown capacity", DiskUsage{}, 90, 80, "", 0},
		{"low 0 takes every candidate", disk(9100), 90, 0, "older,old,recent", 9100*mb - 900*mb},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, short := ImagesToRemove(images, inUse, tt.disk, tt.high, tt.low, time.Minute, now)
			if strings.Join(got, ",") != tt.want || short != tt.short {
				t.Errorf("got %v short %d, want %q short %d", got, short, tt.want, tt.short)
			}
		})
	}
}

// TestImagesToRemoveTies: images last used at the same time go larger first, then
// by id, so the choice does not depend on the listing's order.
func TestImagesToRemoveTies(t *testing.T) {
	now := time.Now()
	at := now.Add(-time.Hour)
	images := []ImageRecord{
		{ID: "b", Size: 10, FirstSeen: at, LastUsed: at},
		{ID: "a", Size: 10, FirstSeen: at, LastUsed: at},
		{ID: "big", Size: 50, FirstSeen: at, LastUsed: at},
	}
	got, _ := ImagesToRemove(images, nil, DiskUsage{Used: 100, Capacity: 100}, 90, 35, 0, now)
	if strings.Join(got, ",") != "big,a,b" {
		t.Errorf("got %v", got)
	}
	got, _ = ImagesToRemove(images, nil, DiskUsage{Used: 100, Capacity: 100}, 90, 50, 0, now)
	if strings.Join(got, ",") != "big" {
		t.Errorf("got %v", got)
	}
}
