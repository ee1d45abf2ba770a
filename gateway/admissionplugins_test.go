package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/actors/admission"
)

// denyPods is AlwaysDeny for pods only (the bootstrap's namespaces pass).
type denyPods struct{}

func (denyPods) Name() string { return "DenyPods" }

func (denyPods) Admit(a *admission.Attributes) error {
	if a.Resource != "pods" {
		return nil
	}
	return admission.AlwaysDeny{}.Admit(a)
}

func TestAlwaysDenyAnswers(t *testing.T) {
	h := newHarness(t, harnessOptions{admission: admission.Chain{denyPods{}}})
	code, body, _ := h.do("POST", "/api/v1/namespaces/default/pods", "application/json", podJSON("web"))
	var status metav1.Status
	if err := json.Unmarshal([]byte(body), &status); err != nil {
		t.Fatalf("%d %s: %v", code, body, err)
	}
	const message = `Pod "web" is forbidden: Admission control is denying all modifications`
	if code != http.StatusForbidden || status.Code != http.StatusForbidden || status.Reason != metav1.StatusReasonForbidden || status.Message != message {
		t.Fatalf("%d %s", code, body)
	}
	// client-go (kubectl's) sees the same Status.
	_, err := h.client.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}, metav1.CreateOptions{})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsForbidden(err) || se.ErrStatus.Message != message {
		t.Fatalf("client-go: %v", err)
	}
}

func TestPrivilegedAnswers(t *testing.T) {
	privileged := func(name string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":{"containers":[
			{"name":"c","image":"nginx","securityContext":{"privileged":true}}]}}`
	}
	t.Run("refused without --allow-privileged", func(t *testing.T) {
		h := newHarness(t, harnessOptions{admissionControl: []string{"NamespaceLifecycle"}, denyPrivileged: true})
		code, body, _ := h.do("POST", "/api/v1/namespaces/default/pods", "application/json", privileged("web"))
		var status metav1.Status
		if err := json.Unmarshal([]byte(body), &status); err != nil || code != http.StatusUnprocessableEntity ||
			status.Message != `Pod "web" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy` ||
			status.Details == nil || len(status.Details.Causes) != 1 || status.Details.Causes[0].Field != "spec.containers[0].securityContext.privileged" {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("no exec into a privileged pod", func(t *testing.T) {
		h := newHarness(t, harnessOptions{admissionControl: []string{"NamespaceLifecycle", "DenyExecOnPrivileged"}})
		if code, body, _ := h.do("POST", "/api/v1/namespaces/default/pods", "application/json", privileged("web")); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
		for _, sub := range []string{"exec?command=ls&stdout=true", "attach?stdout=true"} {
			code, body, _ := h.do("POST", "/api/v1/namespaces/default/pods/web/"+sub, "", "")
			var status metav1.Status
			if err := json.Unmarshal([]byte(body), &status); err != nil || code != http.StatusForbidden ||
				status.Message != `Pod "web" is forbidden: cannot exec into or attach to a privileged container` {
				t.Fatalf("%s: %d %s", sub, code, body)
			}
		}
	})
}

// TestLimitRangerDefaults follows the book's walkthrough (ch. 4.4.2): limit-range-1,
// then redis-master-pod without resources comes back with the defaulted limits, and
// with 1.5Gi of memory is refused.
func TestLimitRangerDefaults(t *testing.T) {
	h := newHarness(t, harnessOptions{admissionControl: []string{"NamespaceLifecycle", "LimitRanger"}})
	const limits = `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"limit-range-1"},"spec":{"limits":[
		{"type":"Pod","max":{"cpu":"2","memory":"1Gi"},"min":{"cpu":"250m","memory":"32Mi"}},
		{"type":"Container","max":{"cpu":"2","memory":"1Gi"},"min":{"cpu":"250m","memory":"32Mi"},"default":{"cpu":"250m","memory":"64Mi"}}]}}`
	if code, body, _ := h.do("POST", "/api/v1/namespaces/default/limitranges", "application/json", limits); code != http.StatusCreated {
		t.Fatalf("limitrange: %d %s", code, body)
	}
	redis := func(resources string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"redis-master-pod","labels":{"name":"redis-master-pod"}},"spec":{"containers":[
			{"name":"master-pod","image":"kubeguide/redis-master","ports":[{"containerPort":6379}]` + resources + `}]}}`
	}
	code, body, _ := h.do("POST", "/api/v1/namespaces/default/pods", "application/json", redis(""))
	if code != http.StatusCreated {
		t.Fatalf("pod: %d %s", code, body)
	}
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(body), &pod); err != nil {
		t.Fatal(err)
	}
	r := pod.Spec.Containers[0].Resources
	if r.Limits.Cpu().String() != "250m" || r.Limits.Memory().String() != "64Mi" ||
		r.Requests.Cpu().String() != "250m" || r.Requests.Memory().String() != "64Mi" {
		t.Fatalf("resources %v", r)
	}
	code, body, _ = h.do("POST", "/api/v1/namespaces/default/pods", "application/json",
		redis(`,"resources":{"limits":{"memory":"1.5Gi"}}`))
	var status metav1.Status
	if err := json.Unmarshal([]byte(body), &status); err != nil || code != http.StatusForbidden ||
		status.Message != `Pod "redis-master-pod" is forbidden: Maximum memory usage per pod is 1Gi` {
		t.Fatalf("%d %s", code, body)
	}
}

// TestAlwaysDenyStillBootstraps: the server's own bootstrap writes (its namespaces)
// are not admitted by the chain, so a server with --admission-control=AlwaysDeny on
// an empty store starts; everything else is refused.
func TestAlwaysDenyStillBootstraps(t *testing.T) {
	h := newHarness(t, harnessOptions{admissionControl: []string{"AlwaysDeny"}}) // bootstraps, or fails the test
	for _, ns := range []string{"default", "kube-system"} {
		if _, err := h.client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
			t.Fatalf("namespace %s: %v", ns, err)
		}
	}
	code, body, _ := h.do("POST", "/api/v1/namespaces", "application/json", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`)
	if code != http.StatusForbidden || !strings.Contains(body, "Admission control is denying all modifications") {
		t.Fatalf("a user's namespace: %d %s", code, body)
	}
}
