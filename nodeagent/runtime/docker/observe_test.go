package docker

import (
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/network"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

func TestFromInspect(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	tests := []struct {
		name string
		in   container.InspectResponse
		want runtime.Container
	}{
		{
			name: "exited after OOM",
			in: container.InspectResponse{
				ContainerJSONBase: &container.ContainerJSONBase{
					ID: "abc", Name: "/k8s_web", Image: "sha256:123", Created: "2026-01-02T03:04:00Z",
					State: &container.State{Status: "exited", OOMKilled: true, ExitCode: 137,
						StartedAt: started.Format(time.RFC3339Nano), FinishedAt: "2026-01-02T03:05:00Z"},
				},
				Config: &container.Config{Image: "kubeactor/testserver:latest", Labels: map[string]string{"a": "b"}},
			},
			want: runtime.Container{ID: "abc", Name: "k8s_web", Image: "kubeactor/testserver:latest", ImageID: "sha256:123",
				Labels: map[string]string{"a": "b"}, State: runtime.StateExited, ExitCode: 137, OOMKilled: true,
				StartedAt: started, FinishedAt: time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC),
				CreatedAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)},
		},
		{
			name: "created, never run",
			in: container.InspectResponse{
				ContainerJSONBase: &container.ContainerJSONBase{ID: "x", Name: "/n",
					State: &container.State{Status: "created", StartedAt: "0001-01-01T00:00:00Z", FinishedAt: "0001-01-01T00:00:00Z"}},
			},
			want: runtime.Container{ID: "x", Name: "n", State: runtime.StateCreated},
		},
		{
			name: "running on two networks prefers bridge",
			in: container.InspectResponse{
				ContainerJSONBase: &container.ContainerJSONBase{ID: "r", Name: "/r",
					State: &container.State{Status: "running", Running: true, Pid: 42}},
				NetworkSettings: &container.NetworkSettings{Networks: map[string]*network.EndpointSettings{
					"aaa": {IPAddress: "10.1.0.2"}, "bridge": {IPAddress: "172.17.0.5"}}},
			},
			want: runtime.Container{ID: "r", Name: "r", State: runtime.StateRunning, PID: 42, IP: "172.17.0.5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromInspect(tt.in)
			if got.ID != tt.want.ID || got.Name != tt.want.Name || got.Image != tt.want.Image || got.ImageID != tt.want.ImageID ||
				got.State != tt.want.State || got.ExitCode != tt.want.ExitCode || got.OOMKilled != tt.want.OOMKilled ||
				got.PID != tt.want.PID || got.IP != tt.want.IP || got.Labels["a"] != tt.want.Labels["a"] ||
				!got.StartedAt.Equal(tt.want.StartedAt) || !got.FinishedAt.Equal(tt.want.FinishedAt) || !got.CreatedAt.Equal(tt.want.CreatedAt) {
				t.Errorf("fromInspect =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestBridgeIP(t *testing.T) {
	tests := []struct {
		name string
		nets map[string]*network.EndpointSettings
		want string
	}{
		{"none", nil, ""},
		{"bridge", map[string]*network.EndpointSettings{"bridge": {IPAddress: "172.17.0.2"}}, "172.17.0.2"},
		{"first by name", map[string]*network.EndpointSettings{"zz": {IPAddress: "10.0.0.9"}, "aa": {IPAddress: "10.0.0.1"}}, "10.0.0.1"},
		{"skips empty", map[string]*network.EndpointSettings{"aa": {}, "bb": nil, "cc": {IPAddress: "10.0.0.3"}}, "10.0.0.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bridgeIP(tt.nets); got != tt.want {
				t.Errorf("bridgeIP = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFromDockerState(t *testing.T) {
	tests := []struct {
		in   string
		want runtime.State
	}{
		{"created", runtime.StateCreated}, {"running", runtime.StateRunning}, {"paused", runtime.StateRunning}, {"restarting", runtime.StateRunning},
		{"exited", runtime.StateExited}, {"dead", runtime.StateExited}, {"removing", runtime.StateUnknown}, {"", runtime.StateUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := fromDockerState(tt.in); got != tt.want {
				t.Errorf("fromDockerState(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFromSummary(t *testing.T) {
	got := fromSummary(container.Summary{ID: "id", Names: []string{"/name"}, Image: "img", ImageID: "sha256:1",
		State: "exited", Created: 100, Labels: map[string]string{"k": "v"}})
	if got.ID != "id" || got.Name != "name" || got.Image != "img" || got.ImageID != "sha256:1" || got.State != runtime.StateExited ||
		got.CreatedAt.Unix() != 100 || got.Labels["k"] != "v" {
		t.Errorf("fromSummary = %+v", got)
	}
}

func TestFromStats(t *testing.T) {
	var s container.StatsResponse
	s.CPUStats.CPUUsage.TotalUsage = 5
	s.MemoryStats.Usage = 7
	s.MemoryStats.Limit = 9
	s.MemoryStats.Stats = map[string]uint64{"inactive_file": 3}
	s.Networks = map[string]container.NetworkStats{"eth0": {RxBytes: 1, TxBytes: 2}, "eth1": {RxBytes: 10, TxBytes: 20}}
	got := fromStats(s)
	if got.CPUUsageNanos != 5 || got.MemoryUsageBytes != 7 || got.MemoryLimitBytes != 9 || got.RxBytes != 11 || got.TxBytes != 22 || got.MemoryWorkingSetBytes != 4 {
		t.Errorf("fromStats = %+v", got)
	}
}

func TestFromStatsWorkingSet(t *testing.T) {
	tests := []struct {
		name  string
		stats map[string]uint64
		want  uint64
	}{
		{"cgroup v2", map[string]uint64{"inactive_file": 30}, 70},
		{"cgroup v1", map[string]uint64{"total_inactive_file": 40}, 60},
		{"no cache figure", nil, 100},
		{"cache above usage", map[string]uint64{"inactive_file": 300}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s container.StatsResponse
			s.MemoryStats.Usage = 100
			s.MemoryStats.Stats = tt.stats
			if got := fromStats(s).MemoryWorkingSetBytes; got != tt.want {
				t.Errorf("working set = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFromEvent(t *testing.T) {
	tests := []struct {
		action, want string
	}{
		{"die", "die"}, {"exec_start: sh -c true", "exec_start"}, {"health_status: healthy", "health_status"},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			got := fromEvent(events.Message{Action: events.Action(tt.action), Actor: events.Actor{ID: "c1", Attributes: map[string]string{"l": "v"}}})
			if got.Action != tt.want || got.ContainerID != "c1" || got.Labels["l"] != "v" {
				t.Errorf("fromEvent = %+v, want action %q", got, tt.want)
			}
		})
	}
}

func TestLogParams(t *testing.T) {
	tests := []struct {
		name      string
		tail      int64
		since     time.Time
		wantTail  string
		wantSince string
	}{
		{"all from start", -1, time.Time{}, "all", ""},
		{"last lines", 10, time.Unix(1700000000, 5), "10", "1700000000.000000005"},
		{"none", 0, time.Unix(1, 123456789), "0", "1.123456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dockerTail(tt.tail); got != tt.wantTail {
				t.Errorf("dockerTail(%d) = %q, want %q", tt.tail, got, tt.wantTail)
			}
			if got := dockerSince(tt.since); got != tt.wantSince {
				t.Errorf("dockerSince = %q, want %q", got, tt.wantSince)
			}
		})
	}
}

func TestPullStreamError(t *testing.T) {
	tests := []struct {
		name    string
		stream  string
		wantErr string
	}{
		{"success", `{"status":"Pulling from library/x"}` + "\n" + `{"status":"Digest: sha256:1"}` + "\n", ""},
		{"error in stream", `{"status":"Pulling"}` + "\n" + `{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}` + "\n", "manifest unknown"},
		{"garbage", `{"status":`, "read pull progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pullStreamError(strings.NewReader(tt.stream))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
