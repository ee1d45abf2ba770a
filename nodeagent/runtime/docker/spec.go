package docker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/go-connections/nat"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// DefaultPauseImage is the image of every pod's infrastructure container, built
// locally by images/build.sh (there is no registry to pull it from).
const DefaultPauseImage = "kubeactor/pause:latest"

// createSpec is the body of Docker's container create request.
type createSpec struct {
	Config     *container.Config
	HostConfig *container.HostConfig
}

// dockerCreateSpec maps a ContainerConfig to Docker's create request. It is pure:
// the only failure is an invalid port binding.
//
// Docker rejects a hostname for a container that joins another's network
// namespace, so Hostname is dropped when NetworkMode is "container:<id>" (the
// sandbox carries the pod's hostname). With a memory limit, swap is limited to the
// same amount so the limit is a hard one (an OOM kill, not swapping).
func dockerCreateSpec(cfg runtime.ContainerConfig) (createSpec, error) {
	netMode := container.NetworkMode(cfg.NetworkMode)
	c := &container.Config{
		Image:      cfg.Image,
		Env:        cfg.Env,
		Labels:     cfg.Labels,
		WorkingDir: cfg.WorkingDir,
		Tty:        cfg.TTY,
		OpenStdin:  cfg.Stdin,
		StdinOnce:  cfg.Stdin && cfg.StdinOnce,
		StopSignal: cfg.StopSignal,
		User:       cfg.User,
	}
	if !netMode.IsContainer() {
		c.Hostname = cfg.Hostname
	}
	if len(cfg.Entrypoint) > 0 {
		c.Entrypoint = strslice.StrSlice(cfg.Entrypoint)
	}
	if len(cfg.Cmd) > 0 {
		c.Cmd = strslice.StrSlice(cfg.Cmd)
	}

	h := &container.HostConfig{
		NetworkMode:    netMode,
		IpcMode:        container.IpcMode(cfg.IPCMode),
		DNS:            cfg.DNS,
		DNSSearch:      cfg.DNSSearch,
		DNSOptions:     cfg.DNSOptions,
		Privileged:     cfg.Privileged,
		GroupAdd:       cfg.GroupAdd,
		CapAdd:         cfg.CapAdd,
		CapDrop:        cfg.CapDrop,
		SecurityOpt:    cfg.SecurityOpt,
		Binds:          binds(cfg.Mounts),
		ReadonlyRootfs: cfg.ReadonlyRootfs,
		Resources: container.Resources{
			Memory:    cfg.MemoryLimit,
			CPUShares: cfg.CPUShares,
			CPUQuota:  cfg.CPUQuota,
			CPUPeriod: cfg.CPUPeriod,
		},
	}
	if cfg.MemoryLimit > 0 {
		h.MemorySwap = cfg.MemoryLimit
	}

	exposed, bindings, err := portSpec(cfg.PortBindings)
	if err != nil {
		return createSpec{}, err
	}
	c.ExposedPorts = exposed
	h.PortBindings = bindings
	return createSpec{Config: c, HostConfig: h}, nil
}

// binds renders bind mounts in Docker's "source:target[:ro]" form. Unlike the
// Mounts API, a bind creates a missing host directory, as a hostPath volume needs.
func binds(mounts []runtime.Mount) []string {
	if len(mounts) == 0 {
		return nil
	}
	out := make([]string, 0, len(mounts))
	for _, m := range mounts {
		b := m.Source + ":" + m.Target
		if m.ReadOnly {
			b += ":ro"
		}
		out = append(out, b)
	}
	return out
}

// portSpec turns port bindings into Docker's exposed-port set and port map. A zero
// HostPort lets Docker choose one.
func portSpec(ports []runtime.PortBinding) (nat.PortSet, nat.PortMap, error) {
	if len(ports) == 0 {
		return nil, nil, nil
	}
	exposed := nat.PortSet{}
	bindings := nat.PortMap{}
	for _, p := range ports {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		if proto != "tcp" && proto != "udp" {
			return nil, nil, fmt.Errorf("port %d: unsupported protocol %q", p.ContainerPort, p.Protocol)
		}
		if p.ContainerPort <= 0 || p.ContainerPort > 65535 || p.HostPort < 0 || p.HostPort > 65535 {
			return nil, nil, fmt.Errorf("port binding %d->%d/%s out of range", p.HostPort, p.ContainerPort, proto)
		}
		port, err := nat.NewPort(proto, strconv.Itoa(int(p.ContainerPort)))
		if err != nil {
			return nil, nil, fmt.Errorf("port %d/%s: %w", p.ContainerPort, proto, err)
		}
		exposed[port] = struct{}{}
		hostPort := ""
		if p.HostPort > 0 {
			hostPort = strconv.Itoa(int(p.HostPort))
		}
		bindings[port] = append(bindings[port], nat.PortBinding{HostIP: p.HostIP, HostPort: hostPort})
	}
	return exposed, bindings, nil
}
