package podsync

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// dead makes n dead instances of container name of pod uid, ids "<uid>-<name>-<i>",
// instance i created i minutes after t0 and dead from a minute later.
func dead(uid, name string, n int) []runtime.Container {
	var out []runtime.Container
	for i := range n {
		created := t0.Add(time.Duration(i) * time.Minute)
		out = append(out, runtime.Container{
			ID:         uid + "-" + name + "-" + strconv.Itoa(i),
			Labels:     map[string]string{LabelPodUID: uid, LabelContainer: name},
			State:      runtime.StateExited,
			CreatedAt:  created,
			StartedAt:  created,
			FinishedAt: created.Add(30 * time.Second),
		})
	}
	return out
}

func join(lists ...[]runtime.Container) []runtime.Container {
	var out []runtime.Container
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func TestDeadContainersToRemove(t *testing.T) {
	late := t0.Add(time.Hour)
	running := runtime.Container{ID: "a-web-run", State: runtime.StateRunning, CreatedAt: t0.Add(time.Hour),
		Labels: map[string]string{LabelPodUID: "a", LabelContainer: "web"}}
	foreign := runtime.Container{ID: "not-ours", State: runtime.StateExited, CreatedAt: t0}
	young := dead("a", "web", 1)[0]
	young.ID, young.CreatedAt, young.FinishedAt = "a-web-young", late.Add(-10*time.Second), late.Add(-5*time.Second)
	tests := []struct {
		name         string
		all          []runtime.Container
		wanted       []string
		perContainer int
		total        int
		now          time.Time
		want         []string
	}{
		{"pod gone: every dead container, sandbox included", join(dead("gone", "web", 2), dead("gone", InfraName, 1), []runtime.Container{foreign}),
			nil, 2, 100, late, []string{"gone-POD-0", "gone-web-0", "gone-web-1"}},
		{"pod gone but died just now: kept a minute", join(dead("gone", "web", 1)),
			nil, 2, 100, t0.Add(80 * time.Second), nil},
		{"per container limit keeps the newest", join(dead("a", "web", 5), dead("a", InfraName, 3)),
			[]string{"a"}, 2, 100, late, []string{"a-POD-0", "a-web-0", "a-web-1", "a-web-2"}},
		{"per container 0 keeps only the latest", join(dead("a", "web", 3)),
			[]string{"a"}, 0, 100, late, []string{"a-web-0", "a-web-1"}},
		{"per container negative: no limit", join(dead("a", "web", 3)),
			[]string{"a"}, -1, -1, late, nil},
		{"running and latest never removed", join(dead("a", "web", 2), []runtime.Container{running}),
			[]string{"a"}, 0, 0, late, []string{"a-web-0", "a-web-1"}},
		{"young ones count but stay", join(dead("a", "web", 3), []runtime.Container{young}),
			[]string{"a"}, 2, 100, late, []string{"a-web-0", "a-web-1"}},
		{"total limit: oldest go first", join(dead("a", "web", 4), dead("b", "web", 4)),
			[]string{"a", "b"}, 10, 3, late, []string{"a-web-0", "a-web-1", "b-web-0", "b-web-1"}},
		{"total limit across units", join(dead("a", "web", 3), dead("b", "log", 2), dead("c", "db", 2)),
			[]string{"a", "b", "c"}, -1, 2, late, []string{"a-web-0", "b-log-0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wanted := map[string]bool{}
			for _, w := range tt.wanted {
				wanted[w] = true
			}
			got := DeadContainersToRemove(tt.all, wanted, tt.perContainer, tt.total, MinGCAge, tt.now)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("remove %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDeadContainersMinimumAge: --minimum-container-ttl-duration decides which dead
// containers may go at all, whatever the other limits say.
func TestDeadContainersMinimumAge(t *testing.T) {
	// Instance i of a/web died at t0 + i min + 30 s; gone/web's two likewise.
	all := join(dead("a", "web", 5), dead("gone", "web", 2))
	tests := []struct {
		name   string
		minAge time.Duration
		now    time.Time
		want   []string
	}{
		{"none dead long enough", 2 * time.Hour, t0.Add(time.Hour), nil},
		{"only the long dead go", 90 * time.Second, t0.Add(3*time.Minute + time.Second), []string{"a-web-0", "a-web-1", "gone-web-0", "gone-web-1"}},
		{"zero: every removable one", 0, t0.Add(5 * time.Minute), []string{"a-web-0", "a-web-1", "a-web-2", "a-web-3", "gone-web-0", "gone-web-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DeadContainersToRemove(all, map[string]bool{"a": true}, 0, 0, tt.minAge, tt.now)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("remove %v, want %v", got, tt.want)
			}
		})
	}
}
