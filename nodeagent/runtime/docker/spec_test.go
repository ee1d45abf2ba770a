package docker

import (
	"reflect"
	"testing"

	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/go-connections/nat"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

func TestDockerCreateSpec(t *testing.T) {
	tests := []struct {
		name    string
		cfg     runtime.ContainerConfig
		check   func(t *testing.T, s createSpec)
		wantErr bool
	}{
		{
			name: "image defaults kept when no command or args",
			cfg:  runtime.ContainerConfig{Image: "kubeactor/testserver:latest"},
			check: func(t *testing.T, s createSpec) {
				if s.Config.Entrypoint != nil || s.Config.Cmd != nil {
					t.Errorf("entrypoint %v cmd %v, want both nil", s.Config.Entrypoint, s.Config.Cmd)
				}
				if s.Config.ExposedPorts != nil || s.HostConfig.PortBindings != nil || s.HostConfig.Binds != nil {
					t.Errorf("ports/binds set without input: %+v %+v", s.Config.ExposedPorts, s.HostConfig.Binds)
				}
				if s.HostConfig.MemorySwap != 0 {
					t.Errorf("swap %d without memory limit", s.HostConfig.MemorySwap)
				}
			},
		},
		{
			name: "command and args override",
			cfg:  runtime.ContainerConfig{Image: "b", Entrypoint: []string{"sh", "-c"}, Cmd: []string{"echo hi"}},
			check: func(t *testing.T, s createSpec) {
				if !reflect.DeepEqual(s.Config.Entrypoint, strslice.StrSlice{"sh", "-c"}) || !reflect.DeepEqual(s.Config.Cmd, strslice.StrSlice{"echo hi"}) {
					t.Errorf("entrypoint %v cmd %v", s.Config.Entrypoint, s.Config.Cmd)
				}
			},
		},
		{
			name: "hostname dropped when joining a sandbox",
			cfg:  runtime.ContainerConfig{Image: "b", Hostname: "web-0", NetworkMode: "container:abc", IPCMode: "container:abc"},
			check: func(t *testing.T, s createSpec) {
				if s.Config.Hostname != "" {
					t.Errorf("hostname %q, want empty", s.Config.Hostname)
				}
				if s.HostConfig.NetworkMode != "container:abc" || s.HostConfig.IpcMode != "container:abc" {
					t.Errorf("modes %q %q", s.HostConfig.NetworkMode, s.HostConfig.IpcMode)
				}
			},
		},
		{
			name: "hostname kept on the bridge",
			cfg:  runtime.ContainerConfig{Image: "b", Hostname: "web-0", IPCMode: "shareable"},
			check: func(t *testing.T, s createSpec) {
				if s.Config.Hostname != "web-0" || s.HostConfig.IpcMode != "shareable" {
					t.Errorf("hostname %q ipc %q", s.Config.Hostname, s.HostConfig.IpcMode)
				}
			},
		},
		{
			name: "ports, dns, mounts, resources, flags",
			cfg: runtime.ContainerConfig{
				Image: "b",
				PortBindings: []runtime.PortBinding{
					{ContainerPort: 8080, HostPort: 80},
					{ContainerPort: 53, HostPort: 5353, HostIP: "127.0.0.1", Protocol: "UDP"},
					{ContainerPort: 8080, HostPort: 0, Protocol: "tcp"},
				},
				DNS: []string{"10.0.0.10"}, DNSSearch: []string{"default.svc.cluster.local"}, DNSOptions: []string{"ndots:5"},
				Mounts:      []runtime.Mount{{Source: "/var/a", Target: "/a"}, {Source: "/var/b", Target: "/b", ReadOnly: true}},
				MemoryLimit: 64 << 20, CPUShares: 256, CPUQuota: 50000, CPUPeriod: 100000,
				Privileged: true, TTY: true, Stdin: true, StdinOnce: true, StopSignal: "SIGINT",
				User: "1000:3000", GroupAdd: []string{"5"}, CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"KILL"},
				SecurityOpt: []string{"label=type:svirt_lxc_net_t"}, ReadonlyRootfs: true,
				Labels: map[string]string{"a": "b"},
			},
			check: func(t *testing.T, s createSpec) {
				wantExposed := nat.PortSet{"8080/tcp": {}, "53/udp": {}}
				if !reflect.DeepEqual(s.Config.ExposedPorts, wantExposed) {
					t.Errorf("exposed %v, want %v", s.Config.ExposedPorts, wantExposed)
				}
				wantBindings := nat.PortMap{
					"8080/tcp": {{HostPort: "80"}, {HostPort: ""}},
					"53/udp":   {{HostIP: "127.0.0.1", HostPort: "5353"}},
				}
				if !reflect.DeepEqual(s.HostConfig.PortBindings, wantBindings) {
					t.Errorf("bindings %v, want %v", s.HostConfig.PortBindings, wantBindings)
				}
				if want := []string{"/var/a:/a", "/var/b:/b:ro"}; !reflect.DeepEqual(s.HostConfig.Binds, want) {
					t.Errorf("binds %v, want %v", s.HostConfig.Binds, want)
				}
				h := s.HostConfig
				if h.Memory != 64<<20 || h.MemorySwap != 64<<20 || h.CPUShares != 256 || h.CPUQuota != 50000 || h.CPUPeriod != 100000 {
					t.Errorf("resources %+v", h.Resources)
				}
				if !h.Privileged || !s.Config.Tty || !s.Config.OpenStdin || !s.Config.StdinOnce || s.Config.StopSignal != "SIGINT" {
					t.Errorf("flags privileged=%v tty=%v stdin=%v once=%v stop=%q", h.Privileged, s.Config.Tty, s.Config.OpenStdin, s.Config.StdinOnce, s.Config.StopSignal)
				}
				if h.DNS[0] != "10.0.0.10" || h.DNSSearch[0] != "default.svc.cluster.local" || h.DNSOptions[0] != "ndots:5" {
					t.Errorf("dns %v %v %v", h.DNS, h.DNSSearch, h.DNSOptions)
				}
				if s.Config.User != "1000:3000" || !reflect.DeepEqual(h.GroupAdd, []string{"5"}) || !reflect.DeepEqual([]string(h.CapAdd), []string{"NET_ADMIN"}) ||
					!reflect.DeepEqual([]string(h.CapDrop), []string{"KILL"}) || !reflect.DeepEqual(h.SecurityOpt, []string{"label=type:svirt_lxc_net_t"}) || !h.ReadonlyRootfs {
					t.Errorf("security user=%q groups=%v add=%v drop=%v opt=%v ro=%v", s.Config.User, h.GroupAdd, h.CapAdd, h.CapDrop, h.SecurityOpt, h.ReadonlyRootfs)
				}
				if s.Config.Labels["a"] != "b" {
					t.Errorf("labels %v", s.Config.Labels)
				}
			},
		},
		{
			name:    "unknown protocol",
			cfg:     runtime.ContainerConfig{Image: "b", PortBindings: []runtime.PortBinding{{ContainerPort: 80, Protocol: "sctp"}}},
			wantErr: true,
		},
		{
			name:    "port out of range",
			cfg:     runtime.ContainerConfig{Image: "b", PortBindings: []runtime.PortBinding{{ContainerPort: 70000}}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := dockerCreateSpec(tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}
