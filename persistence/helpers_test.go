package persistence

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func newObject(res string) (runtime.Object, error) {
	switch res {
	case "pods":
		return &corev1.Pod{}, nil
	case "configmaps":
		return &corev1.ConfigMap{}, nil
	case "nodes":
		return &corev1.Node{}, nil
	}
	return nil, fmt.Errorf("unknown resource %q", res)
}

// openMem opens a store on fs (a fresh in-memory one when nil).
func openMem(t testing.TB, fs vfs.FS, window int64) *Store {
	t.Helper()
	if fs == nil {
		fs = vfs.NewMem()
	}
	s, err := Open(Options{Dir: "db", fs: fs, ChangeLogWindow: window, NewObject: newObject, Claims: podCIDRClaims})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

func closeStore(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// applyEach applies cmds one transaction each, in order, failing t on the first error.
func applyEach(t testing.TB, s *Store, cmds ...Command) {
	t.Helper()
	for _, c := range cmds {
		if _, _, err := s.Apply(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
}

func podKey(ns, name string) Key { return Key{Resource: "pods", Namespace: ns, Name: name} }

// pod builds a realistic pod of about 1.5 KB of JSON.
func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name),
			CreationTimestamp: metav1.Unix(1700000000, 0),
			Labels:            map[string]string{"app": "web", "tier": "frontend", "pod-template-hash": "5d8f7c9b6"},
			Annotations:       map[string]string{"kubernetes.io/created-by": "replication-controller/web"},
			GenerateName:      "web-",
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "nginx", Image: "nginx:1.7.9", ImagePullPolicy: corev1.PullIfNotPresent,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "ENV", Value: "production"}, {Name: "LOG_LEVEL", Value: "info"}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				VolumeMounts:           []corev1.VolumeMount{{Name: "default-token", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				TerminationMessagePath: "/dev/termination-log",
			}},
			Volumes: []corev1.Volume{{Name: "default-token", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: "default-token-abcde"}}}},
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst,
			NodeName: "node-" + strconv.Itoa(len(name)%7), ServiceAccountName: "default",
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.240.0.3", PodIP: "10.244.1.17",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "nginx", Ready: true, RestartCount: 0, Image: "nginx:1.7.9",
				ImageID:     "docker://sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				ContainerID: "docker://fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Unix(1700000005, 0)}},
			}},
		},
	}
}

func create(ns, name string) Command {
	return Command{Op: OpCreate, Key: podKey(ns, name), Object: pod(ns, name)}
}

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
}

func podImage(it *Item) string { return it.Object().(*corev1.Pod).Spec.Containers[0].Image }
