package gateway

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// The book's quota (ch3-5 §5.8, resourcequota-development.yaml).
const bookQuota = `apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota-development
  namespace: development
spec:
  hard:
    cpu: "32"
    memory: 256Gi
    persistentvolumeclaims: "10"
    pods: "100"
    replicationcontrollers: "50"
    resourcequotas: "1"
    secrets: "20"
    services: "50"
`

func usedOf(q *corev1.ResourceQuota) string {
	var cells []string
	for _, name := range []corev1.ResourceName{"cpu", "memory", "persistentvolumeclaims", "pods", "replicationcontrollers", "resourcequotas", "secrets", "services"} {
		u, h := q.Status.Used[name], q.Status.Hard[name]
		cells = append(cells, fmt.Sprintf("%s %s/%s", name, u.String(), h.String()))
	}
	return strings.Join(cells, ", ")
}

// The book's quota walkthrough: the quota counts itself; a pod without limits is
// refused with the book's message; a pod with limits is charged (memory in raw
// bytes, as the book prints it); the 11th pod against a quota of 10 is refused.
func TestQuotaBookWalkthrough(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	if _, err := h.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "development"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/development/resourcequotas", "application/yaml", bookQuota); code != http.StatusCreated {
		t.Fatalf("create quota: %d %s", code, body)
	}
	quota := func() *corev1.ResourceQuota {
		q, err := h.client.CoreV1().ResourceQuotas("development").Get(ctx, "quota-development", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get quota: %v", err)
		}
		return q
	}
	want := "cpu 0/32, memory 0/256Gi, persistentvolumeclaims 0/10, pods 0/100, replicationcontrollers 0/50, resourcequotas 1/1, secrets 0/20, services 0/50"
	poll.UntilTrue(t, 10*time.Second, "quota counted", func() bool { return usedOf(quota()) == want })

	pod := func(name string, limits corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "master", Image: "kubeguide/redis-master", Resources: corev1.ResourceRequirements{Limits: limits}}}}}
	}
	_, err := h.client.CoreV1().Pods("development").Create(ctx, pod("redis-master", nil), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), `"redis-master" is forbidden: Limited to 256Gi memory, but pod has no specified memory limit`) {
		t.Fatalf("pod without limits: %v", err)
	}
	defaults := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	if _, err := h.client.CoreV1().Pods("development").Create(ctx, pod("redis-master", defaults), metav1.CreateOptions{}); err != nil {
		t.Fatalf("pod with limits: %v", err)
	}
	want = "cpu 250m/32, memory 67108864/256Gi, persistentvolumeclaims 0/10, pods 1/100, replicationcontrollers 0/50, resourcequotas 1/1, secrets 0/20, services 0/50"
	poll.UntilTrue(t, 10*time.Second, "pod charged", func() bool { return usedOf(quota()) == want })

	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(kubectl, "--server", h.http.URL, "describe", "quota", "quota-development", "--namespace=development").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl describe quota: %v\n%s", err, out)
		}
		// The API object says 67108864 as the book prints it; today's kubectl prints
		// the same quantity as 64Mi.
		for _, line := range [][]string{{"cpu", "250m", "32"}, {"memory", "64Mi", "256Gi"}, {"pods", "1", "100"}, {"resourcequotas", "1", "1"}, {"services", "0", "50"}} {
			if !containsFields(string(out), line) {
				t.Errorf("kubectl describe quota: no line %v in\n%s", line, out)
			}
		}
	}

	// A second quota is refused: the namespace's quota allows one.
	second := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "second"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("1")}}}
	if _, err := h.client.CoreV1().ResourceQuotas("development").Create(ctx, second, metav1.CreateOptions{}); !apierrors.IsForbidden(err) ||
		!strings.HasSuffix(err.Error(), "is forbidden: Limited to 1 resourcequotas") {
		t.Fatalf("second quota: %v", err)
	}

	// The book's §1.13 quota of 10 pods, in a namespace of its own: the 11th is refused.
	if _, err := h.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "myspace"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	ten := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "quota"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"memory": resource.MustParse("1Gi"), "cpu": resource.MustParse("20"), "pods": resource.MustParse("10"), "services": resource.MustParse("5"),
		"replicationcontrollers": resource.MustParse("20"), "resourcequotas": resource.MustParse("1")}}}
	if _, err := h.client.CoreV1().ResourceQuotas("myspace").Create(ctx, ten, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create quota: %v", err)
	}
	for i := 1; i <= 11; i++ {
		_, err := h.client.CoreV1().Pods("myspace").Create(ctx, pod(fmt.Sprintf("web-%d", i), defaults), metav1.CreateOptions{})
		switch {
		case i <= 10 && err != nil:
			t.Fatalf("pod %d: %v", i, err)
		case i == 11 && (!apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), `"web-11" is forbidden: Limited to 10 pods`)):
			t.Fatalf("the 11th pod: %v", err)
		}
	}
}

// containsFields tells whether some line of out has the fields want, in order.
func containsFields(out string, want []string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(l), " ") == strings.Join(want, " ") {
			return true
		}
	}
	return false
}
