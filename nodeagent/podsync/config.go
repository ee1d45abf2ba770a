package podsync

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// ErrConfig marks a container that cannot be configured from its pod spec (unknown
// volume, bad subPath, unresolvable env reference): the agent reports it as
// CreateContainerConfigError.
var ErrConfig = errors.New("podsync: container config")

// ReasonCreateContainerConfigError is the waiting reason for an ErrConfig.
const ReasonCreateContainerConfigError = "CreateContainerConfigError"

// Cgroup CPU settings.
const (
	CPUPeriod    = 100000 // µs, the CFS period CPUQuota is given in
	minCPUShares = 2
	minCPUQuota  = 1000 // µs, the kernel's minimum
)

// SandboxConfig is the infra container of pod on node: the sandbox image, every
// container port with a hostPort published on it, the pod's DNS settings, the pod
// name as hostname, bridge or host networking, and a shareable IPC namespace.
// suffix is the name's random part.
func SandboxConfig(pod *corev1.Pod, node, image, suffix string, dns DNSConfig) runtime.ContainerConfig {
	hash := SandboxHash(pod)
	cfg := runtime.ContainerConfig{
		Name:       ContainerName(pod, InfraName, hash, suffix),
		Image:      image,
		Labels:     Labels(pod, node, InfraName, hash, 0),
		IPCMode:    "shareable",
		DNS:        dns.Servers,
		DNSSearch:  dns.Searches,
		DNSOptions: dns.Options,
	}
	if pod.Spec.HostIPC {
		cfg.IPCMode = "host"
	}
	if pod.Spec.HostNetwork {
		cfg.NetworkMode = "host"
		return cfg
	}
	cfg.Hostname = pod.Name
	if pod.Spec.Hostname != "" {
		cfg.Hostname = pod.Spec.Hostname
	}
	if len(cfg.Hostname) > 63 {
		cfg.Hostname = strings.TrimRight(cfg.Hostname[:63], "-.")
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			cfg.PortBindings = append(cfg.PortBindings, runtime.PortBinding{
				ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIP: p.HostIP, Protocol: proto,
			})
		}
	}
	return cfg
}

// ContainerConfig is spec container index of pod, to join the sandbox sandboxID on
// node: command and args with $(VAR) expanded against env (the container's resolved
// "NAME=value" list), its working directory, env, one mount per volumeMount
// (volumes maps volume names to host paths), cgroup limits from its resources,
// privileged, TTY and stdin, and the labels for restartCount. Errors wrap ErrConfig.
func ContainerConfig(pod *corev1.Pod, index int, node, sandboxID, suffix string, env []string, volumes map[string]string, restartCount int) (runtime.ContainerConfig, error) {
	if index < 0 || index >= len(pod.Spec.Containers) {
		return runtime.ContainerConfig{}, fmt.Errorf("%w: pod %s has no container %d", ErrConfig, FullName(pod), index)
	}
	c := &pod.Spec.Containers[index]
	hash := HashContainer(c)
	lookup := envLookup(env)
	expand := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = Expand(s, lookup)
		}
		return out
	}
	cfg := runtime.ContainerConfig{
		Name:        ContainerName(pod, c.Name, hash, suffix),
		Image:       c.Image,
		Entrypoint:  expand(c.Command),
		Cmd:         expand(c.Args),
		WorkingDir:  c.WorkingDir,
		Env:         env,
		Labels:      Labels(pod, node, c.Name, hash, restartCount),
		NetworkMode: "container:" + sandboxID,
		IPCMode:     "container:" + sandboxID,
		TTY:         c.TTY,
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
	}
	applySecurityContext(&cfg, pod.Spec.SecurityContext, c.SecurityContext)
	for _, vm := range c.VolumeMounts {
		m, err := mount(vm, volumes)
		if err != nil {
			return runtime.ContainerConfig{}, fmt.Errorf("container %s of pod %s: %w", c.Name, FullName(pod), err)
		}
		cfg.Mounts = append(cfg.Mounts, m)
	}
	cfg.MemoryLimit, cfg.CPUShares, cfg.CPUQuota, cfg.CPUPeriod = cgroup(c.Resources)
	return cfg, nil
}

// applySecurityContext sets cfg's privileges from the container's security context,
// whose runAsUser, runAsGroup and seLinuxOptions fall back to the pod's: privileged,
// the user ("uid" or "uid:gid"), the pod's supplementalGroups and fsGroup as extra
// groups, capabilities added and dropped, SELinux labels and a read-only root.
func applySecurityContext(cfg *runtime.ContainerConfig, psc *corev1.PodSecurityContext, sc *corev1.SecurityContext) {
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	user, group, selinux := cmp.Or(sc.RunAsUser, psc.RunAsUser), cmp.Or(sc.RunAsGroup, psc.RunAsGroup), cmp.Or(sc.SELinuxOptions, psc.SELinuxOptions)
	if user != nil {
		cfg.User = strconv.FormatInt(*user, 10)
		if group != nil {
			cfg.User += ":" + strconv.FormatInt(*group, 10)
		}
	}
	for _, g := range psc.SupplementalGroups {
		cfg.GroupAdd = append(cfg.GroupAdd, strconv.FormatInt(g, 10))
	}
	if psc.FSGroup != nil {
		cfg.GroupAdd = append(cfg.GroupAdd, strconv.FormatInt(*psc.FSGroup, 10))
	}
	if caps := sc.Capabilities; caps != nil {
		for _, c := range caps.Add {
			cfg.CapAdd = append(cfg.CapAdd, string(c))
		}
		for _, c := range caps.Drop {
			cfg.CapDrop = append(cfg.CapDrop, string(c))
		}
	}
	if selinux != nil {
		for _, l := range []struct{ key, value string }{
			{"user", selinux.User}, {"role", selinux.Role}, {"type", selinux.Type}, {"level", selinux.Level},
		} {
			if l.value != "" {
				cfg.SecurityOpt = append(cfg.SecurityOpt, "label="+l.key+":"+l.value)
			}
		}
	}
	cfg.Privileged = sc.Privileged != nil && *sc.Privileged
	cfg.ReadonlyRootfs = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
}

// mount maps a volumeMount to a bind mount of its volume's host path.
func mount(vm corev1.VolumeMount, volumes map[string]string) (runtime.Mount, error) {
	src, ok := volumes[vm.Name]
	if !ok {
		return runtime.Mount{}, fmt.Errorf("%w: volume %q of mount %s is not defined", ErrConfig, vm.Name, vm.MountPath)
	}
	if vm.SubPath != "" {
		if path.IsAbs(vm.SubPath) || strings.HasPrefix(path.Clean(vm.SubPath), "..") {
			return runtime.Mount{}, fmt.Errorf("%w: subPath %q of volume %q leaves the volume", ErrConfig, vm.SubPath, vm.Name)
		}
		src = path.Join(src, vm.SubPath)
	}
	return runtime.Mount{Source: src, Target: vm.MountPath, ReadOnly: vm.ReadOnly}, nil
}

// cgroup maps resources to the engine's settings: the memory limit in bytes, CPU
// shares from the request (the limit when no request is set; at least 2), and a
// CFS quota from the CPU limit.
func cgroup(r corev1.ResourceRequirements) (memory, shares, quota, period int64) {
	if m, ok := r.Limits[corev1.ResourceMemory]; ok {
		memory = m.Value()
	}
	req, ok := r.Requests[corev1.ResourceCPU]
	if !ok {
		req, ok = r.Limits[corev1.ResourceCPU]
	}
	shares = minCPUShares
	if ok {
		shares = max(req.MilliValue()*1024/1000, minCPUShares)
	}
	if l, ok := r.Limits[corev1.ResourceCPU]; ok && !l.IsZero() {
		quota = max(l.MilliValue()*CPUPeriod/1000, minCPUQuota)
		period = CPUPeriod
	}
	return memory, shares, quota, period
}
