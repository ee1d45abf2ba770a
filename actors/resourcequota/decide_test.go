package resourcequota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// pod builds a pod whose containers have the given cpu/memory limits ("" = unset).
func newPod(name string, limits ...[2]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}}
	for i, l := range limits {
		c := corev1.Container{Name: string(rune('a' + i)), Image: "nginx", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}}}
		if l[0] != "" {
			c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse(l[0])
		}
		if l[1] != "" {
			c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(l[1])
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	return p
}

func equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

func TestUsage(t *testing.T) {
	done := newPod("done", [2]string{"1", "1Gi"})
	done.Status.Phase = corev1.PodSucceeded
	tests := []struct {
		name string
		res  string
		obj  runtime.Object
		want corev1.ResourceList
	}{
		{"pod with limits", "pods", newPod("web", [2]string{"250m", "64Mi"}, [2]string{"500m", "64Mi"}), list("pods", "1", "cpu", "750m", "memory", "128Mi")},
		{"pod without limits", "pods", newPod("web", [2]string{"", ""}), list("pods", "1", "cpu", "0", "memory", "0")},
		{"terminal pod", "pods", done, list()},
		{"service", "services", &corev1.Service{}, list("services", "1")},
		{"rc", "replicationcontrollers", &corev1.ReplicationController{}, list("replicationcontrollers", "1")},
		{"quota", "resourcequotas", &corev1.ResourceQuota{}, list("resourcequotas", "1")},
		{"secret", "secrets", &corev1.Secret{}, list("secrets", "1")},
		{"pvc", "persistentvolumeclaims", &corev1.PersistentVolumeClaim{}, list("persistentvolumeclaims", "1")},
		{"not counted", "configmaps", &corev1.ConfigMap{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Usage(tt.res, tt.obj); !equal(got, tt.want) {
				t.Errorf("Usage = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	book := list("cpu", "32", "memory", "256Gi", "persistentvolumeclaims", "10", "pods", "100",
		"replicationcontrollers", "50", "resourcequotas", "1", "secrets", "20", "services", "50")
	zero := list("cpu", "0", "memory", "0", "persistentvolumeclaims", "0", "pods", "0",
		"replicationcontrollers", "0", "resourcequotas", "1", "secrets", "0", "services", "0")
	tests := []struct {
		name       string
		hard, used corev1.ResourceList
		res        string
		obj        runtime.Object
		want       corev1.ResourceList // nil: refused
		msg        string
	}{
		{"the 11th pod", list("pods", "10"), list("pods", "10"), "pods", newPod("p11", [2]string{"", ""}), nil,
			`Pod "p11" is forbidden: Limited to 10 pods`},
		{"the 10th pod", list("pods", "10"), list("pods", "9"), "pods", newPod("p10", [2]string{"", ""}), list("pods", "10"), ""},
		{"the book's pod without limits", book, zero, "pods", newPod("redis-master", [2]string{"", ""}), nil,
			`Pod "redis-master" is forbidden: Limited to 256Gi memory, but pod has no specified memory limit`},
		{"no cpu limit", list("cpu", "2"), list("cpu", "0"), "pods", newPod("web", [2]string{"", "64Mi"}), nil,
			`Pod "web" is forbidden: Limited to 2 CPU, but pod has no specified cpu limit`},
		{"one container without limits", list("memory", "1Gi"), list("memory", "0"), "pods", newPod("web", [2]string{"", "64Mi"}, [2]string{"", ""}), nil,
			`Pod "web" is forbidden: Limited to 1Gi memory, but pod has no specified memory limit`},
		{"the book's pod with the defaults", book, zero, "pods", newPod("redis-master", [2]string{"250m", "64Mi"}),
			list("cpu", "250m", "memory", "67108864", "persistentvolumeclaims", "0", "pods", "1",
				"replicationcontrollers", "0", "resourcequotas", "1", "secrets", "0", "services", "0"), ""},
		{"over cpu", list("cpu", "1"), list("cpu", "800m"), "pods", newPod("web", [2]string{"250m", ""}), nil,
			`Pod "web" is forbidden: Limited to 1 CPU`},
		{"cpu exactly full", list("cpu", "1"), list("cpu", "750m"), "pods", newPod("web", [2]string{"250m", ""}), list("cpu", "1"), ""},
		{"over memory", list("memory", "128Mi"), list("memory", "100Mi"), "pods", newPod("web", [2]string{"", "64Mi"}), nil,
			`Pod "web" is forbidden: Limited to 128Mi memory`},
		{"pods only: no limits needed", list("pods", "2"), list("pods", "0"), "pods", newPod("web", [2]string{"", ""}), list("pods", "1"), ""},
		{"services", list("services", "5"), list("services", "5"), "services", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"}}, nil,
			`Service "db" is forbidden: Limited to 5 services`},
		{"the second quota", list("resourcequotas", "1"), list("resourcequotas", "1"), "resourcequotas", &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q2"}}, nil,
			`ResourceQuota "q2" is forbidden: Limited to 1 resourcequotas`},
		{"a secret where only pods count", list("pods", "1"), list("pods", "1"), "secrets", &corev1.Secret{}, list("pods", "1"), ""},
		{"not counted", list("pods", "1"), list("pods", "1"), "configmaps", &corev1.ConfigMap{}, list("pods", "1"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Admit(tt.hard, tt.used, tt.res, tt.obj)
			if tt.want == nil {
				if !apierrors.IsForbidden(err) || err.Error() != tt.msg {
					t.Fatalf("Admit = %v, %v; want 403 %q", got, err, tt.msg)
				}
				return
			}
			if err != nil || !equal(got, tt.want) {
				t.Fatalf("Admit = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	t.Run("unknown usage", func(t *testing.T) {
		if _, err := Admit(list("pods", "1"), list(), "pods", newPod("web")); err != ErrUnknownUsage {
			t.Fatalf("Admit = %v, want ErrUnknownUsage", err)
		}
	})
}

func TestRecount(t *testing.T) {
	now := time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)
	done := newPod("done", [2]string{"1", "1Gi"})
	done.Status.Phase = corev1.PodFailed
	stored := map[string][]runtime.Object{
		"pods":     {newPod("a", [2]string{"250m", "64Mi"}), newPod("b", [2]string{"500m", "64Mi"}), done},
		"services": {&corev1.Service{}},
	}
	lister := func(res string, fn func(runtime.Object) bool) {
		for _, o := range stored[res] {
			if !fn(o) {
				return
			}
		}
	}
	one := Usage("pods", newPod("c", [2]string{"1", "1Gi"}))
	tests := []struct {
		name     string
		hard     corev1.ResourceList
		pending  []Charge
		want     corev1.ResourceList
		wantKeep int
	}{
		{"counts and compute", list("pods", "10", "cpu", "2", "memory", "1Gi", "services", "1", "secrets", "1"), nil,
			list("pods", "2", "cpu", "750m", "memory", "128Mi", "services", "1", "secrets", "0"), 0},
		{"compute only lists pods", list("cpu", "2"), nil, list("cpu", "750m"), 0},
		{"a charge seen in the store is settled", list("pods", "10"), []Charge{{Resource: "pods", UID: "uid-a", Usage: list("pods", "1"), At: now}},
			list("pods", "2"), 0},
		{"a charge not seen yet still counts", list("pods", "10", "cpu", "4"), []Charge{{Resource: "pods", UID: "uid-c", Usage: one, At: now.Add(-time.Second)}},
			list("pods", "3", "cpu", "1750m"), 1},
		{"an old unseen charge expires", list("pods", "10"), []Charge{{Resource: "pods", UID: "uid-c", Usage: one, At: now.Add(-ChargeTTL)}},
			list("pods", "2"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, keep := Recount(tt.hard, lister, tt.pending, now)
			if !equal(got, tt.want) || len(keep) != tt.wantKeep {
				t.Fatalf("Recount = %v, %d pending; want %v, %d", got, len(keep), tt.want, tt.wantKeep)
			}
		})
	}
}
