package podsync

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

func TestSandboxConfig(t *testing.T) {
	dns := DNSConfig{Servers: []string{"10.0.0.10"}, Searches: []string{"prod.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}}
	ports := []corev1.Container{
		{Name: "web", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 81}}},
		{Name: "dns", Ports: []corev1.ContainerPort{{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP, HostIP: "127.0.0.1"}}},
	}
	tests := []struct {
		name        string
		hostNetwork bool
		hostname    string
		wantNet     string
		wantHost    string
		wantPorts   []runtime.PortBinding
	}{
		{"bridge", false, "", "", "web-1", []runtime.PortBinding{
			{ContainerPort: 80, HostPort: 8080, Protocol: "tcp"},
			{ContainerPort: 53, HostPort: 53, HostIP: "127.0.0.1", Protocol: "udp"}}},
		{"spec hostname", false, "db", "", "db", []runtime.PortBinding{
			{ContainerPort: 80, HostPort: 8080, Protocol: "tcp"},
			{ContainerPort: 53, HostPort: 53, HostIP: "127.0.0.1", Protocol: "udp"}}},
		{"host network", true, "", "host", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("web-1", "prod", "u1")
			pod.Spec.Containers, pod.Spec.HostNetwork, pod.Spec.Hostname = ports, tt.hostNetwork, tt.hostname
			cfg := SandboxConfig(pod, "node-1", "pause:3.9", "abcdef01", dns)
			n, ok := ParseContainerName(cfg.Name)
			if !ok || n.Container != InfraName || n.Hash != SandboxHash(pod) || n.Suffix != "abcdef01" {
				t.Errorf("name %q", cfg.Name)
			}
			if cfg.Image != "pause:3.9" || cfg.IPCMode != "shareable" || cfg.NetworkMode != tt.wantNet || cfg.Hostname != tt.wantHost {
				t.Errorf("image %q ipc %q net %q hostname %q", cfg.Image, cfg.IPCMode, cfg.NetworkMode, cfg.Hostname)
			}
			if !reflect.DeepEqual(cfg.PortBindings, tt.wantPorts) {
				t.Errorf("ports %+v, want %+v", cfg.PortBindings, tt.wantPorts)
			}
			if !reflect.DeepEqual(cfg.DNS, dns.Servers) || !reflect.DeepEqual(cfg.DNSSearch, dns.Searches) || !reflect.DeepEqual(cfg.DNSOptions, dns.Options) {
				t.Errorf("dns %v %v %v", cfg.DNS, cfg.DNSSearch, cfg.DNSOptions)
			}
			if cfg.Labels[LabelContainer] != InfraName || cfg.Labels[LabelNode] != "node-1" || cfg.Labels[LabelHash] != n.Hash {
				t.Errorf("labels %v", cfg.Labels)
			}
		})
	}
}

func TestContainerConfig(t *testing.T) {
	yes := true
	pod := testPod("web-1", "prod", "u1")
	pod.Spec.Containers = []corev1.Container{{
		Name: "web", Image: "nginx", WorkingDir: "/srv", TTY: true, Stdin: true, StdinOnce: true,
		Command: []string{"/bin/sh", "-c"},
		Args:    []string{"echo $(GREETING) $(MISSING) $$(GREETING)"},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "data", MountPath: "/data"},
			{Name: "conf", MountPath: "/etc/nginx/nginx.conf", SubPath: "nginx.conf", ReadOnly: true},
		},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi"), corev1.ResourceCPU: resource.MustParse("500m")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
		},
		SecurityContext: &corev1.SecurityContext{Privileged: &yes},
	}}
	env := []string{"GREETING=hello"}
	vols := map[string]string{"data": "/var/lib/kubelet/pods/u1/volumes/data", "conf": "/var/lib/kubelet/pods/u1/volumes/conf"}
	cfg, err := ContainerConfig(pod, 0, "node-1", "sandbox-id", "12345678", env, vols, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := runtime.ContainerConfig{
		Name:        ContainerName(pod, "web", HashContainer(&pod.Spec.Containers[0]), "12345678"),
		Image:       "nginx",
		Entrypoint:  []string{"/bin/sh", "-c"},
		Cmd:         []string{"echo hello $(MISSING) $(GREETING)"},
		WorkingDir:  "/srv",
		Env:         env,
		Labels:      Labels(pod, "node-1", "web", HashContainer(&pod.Spec.Containers[0]), 4),
		NetworkMode: "container:sandbox-id",
		IPCMode:     "container:sandbox-id",
		Mounts: []runtime.Mount{
			{Source: "/var/lib/kubelet/pods/u1/volumes/data", Target: "/data"},
			{Source: "/var/lib/kubelet/pods/u1/volumes/conf/nginx.conf", Target: "/etc/nginx/nginx.conf", ReadOnly: true},
		},
		MemoryLimit: 128 << 20,
		CPUShares:   256,
		CPUQuota:    50000,
		CPUPeriod:   100000,
		Privileged:  true,
		TTY:         true,
		Stdin:       true,
		StdinOnce:   true,
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config\n%+v\nwant\n%+v", cfg, want)
	}
}

func TestContainerConfigErrors(t *testing.T) {
	tests := []struct {
		name  string
		index int
		mount corev1.VolumeMount
		want  string
	}{
		{"unknown volume", 0, corev1.VolumeMount{Name: "nope", MountPath: "/x"}, `volume "nope"`},
		{"subPath escapes", 0, corev1.VolumeMount{Name: "data", MountPath: "/x", SubPath: "../../etc"}, "leaves the volume"},
		{"absolute subPath", 0, corev1.VolumeMount{Name: "data", MountPath: "/x", SubPath: "/etc"}, "leaves the volume"},
		{"no such index", 3, corev1.VolumeMount{Name: "data", MountPath: "/x"}, "no container 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("web-1", "prod", "u1")
			pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx", VolumeMounts: []corev1.VolumeMount{tt.mount}}}
			_, err := ContainerConfig(pod, tt.index, "n", "sb", "s", nil, map[string]string{"data": "/d"}, 0)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrConfig mentioning %q", err, tt.want)
			}
		})
	}
}

func TestCgroup(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name                          string
		res                           corev1.ResourceRequirements
		memory, shares, quota, period int64
	}{
		{"none", corev1.ResourceRequirements{}, 0, 2, 0, 0},
		{"tiny request", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1m")}}, 0, 2, 0, 0},
		{"one cpu request", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}}, 0, 1024, 0, 0},
		{"limit only", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")}}, 1 << 30, 2048, 200000, 100000},
		{"tiny limit", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("1m")}}, 0, 2, 1000, 100000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, s, qu, p := cgroup(tt.res)
			if m != tt.memory || s != tt.shares || qu != tt.quota || p != tt.period {
				t.Errorf("cgroup = %d %d %d %d, want %d %d %d %d", m, s, qu, p, tt.memory, tt.shares, tt.quota, tt.period)
			}
		})
	}
}
