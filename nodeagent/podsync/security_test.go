package podsync

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

func TestContainerConfigSecurityContext(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	yes := true
	tests := []struct {
		name string
		psc  *corev1.PodSecurityContext
		sc   *corev1.SecurityContext
		want runtime.ContainerConfig // only the security fields
	}{
		{name: "none"},
		{name: "container runAsUser", sc: &corev1.SecurityContext{RunAsUser: i64(1000)}, want: runtime.ContainerConfig{User: "1000"}},
		{name: "user and group", sc: &corev1.SecurityContext{RunAsUser: i64(1000), RunAsGroup: i64(3000)}, want: runtime.ContainerConfig{User: "1000:3000"}},
		{name: "the pod's user, the container's wins", psc: &corev1.PodSecurityContext{RunAsUser: i64(1), RunAsGroup: i64(2)},
			sc: &corev1.SecurityContext{RunAsUser: i64(1000)}, want: runtime.ContainerConfig{User: "1000:2"}},
		{name: "the pod's user", psc: &corev1.PodSecurityContext{RunAsUser: i64(1)}, want: runtime.ContainerConfig{User: "1"}},
		{name: "groups", psc: &corev1.PodSecurityContext{SupplementalGroups: []int64{5, 6}, FSGroup: i64(7)},
			want: runtime.ContainerConfig{GroupAdd: []string{"5", "6", "7"}}},
		{name: "capabilities", sc: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"KILL", "CHOWN"}}},
			want: runtime.ContainerConfig{CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"KILL", "CHOWN"}}},
		{name: "selinux", sc: &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{User: "system_u", Type: "svirt_lxc_net_t", Level: "s0:c1,c2"}},
			want: runtime.ContainerConfig{SecurityOpt: []string{"label=user:system_u", "label=type:svirt_lxc_net_t", "label=level:s0:c1,c2"}}},
		{name: "the pod's selinux", psc: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Role: "object_r"}},
			want: runtime.ContainerConfig{SecurityOpt: []string{"label=role:object_r"}}},
		{name: "privileged and read-only root", sc: &corev1.SecurityContext{Privileged: &yes, ReadOnlyRootFilesystem: &yes},
			want: runtime.ContainerConfig{Privileged: true, ReadonlyRootfs: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("web-1", "prod", "u1")
			pod.Spec.SecurityContext = tc.psc
			pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx", SecurityContext: tc.sc}}
			cfg, err := ContainerConfig(pod, 0, "node-1", "sandbox-id", "12345678", nil, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := runtime.ContainerConfig{User: cfg.User, GroupAdd: cfg.GroupAdd, CapAdd: cfg.CapAdd, CapDrop: cfg.CapDrop,
				SecurityOpt: cfg.SecurityOpt, Privileged: cfg.Privileged, ReadonlyRootfs: cfg.ReadonlyRootfs}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("security\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
