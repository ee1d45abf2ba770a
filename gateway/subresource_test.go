package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
)

func TestBinding(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	pods := h.client.CoreV1().Pods("default")
	for _, n := range []string{"a", "b"} {
		if _, err := pods.Create(ctx, newPod(n).obj(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	tests := []struct {
		name, path, body string
		code             int
		message          string
	}{
		{"subresource", "/api/v1/namespaces/default/pods/a/binding",
			`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"a"},"target":{"kind":"Node","name":"n1"}}`, 201, ""},
		{"already bound", "/api/v1/namespaces/default/pods/a/binding",
			`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"a"},"target":{"kind":"Node","name":"n2"}}`, 409,
			`pod a is already assigned to node "n1"`},
		{"bindings collection", "/api/v1/namespaces/default/bindings",
			`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"b"},"target":{"kind":"Node","name":"n2"}}`, 201, ""},
		{"missing pod", "/api/v1/namespaces/default/bindings",
			`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"zz"},"target":{"kind":"Node","name":"n2"}}`, 404, `pods "zz" not found`},
		{"no target", "/api/v1/namespaces/default/bindings",
			`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"b"},"target":{}}`, 422, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := h.do(http.MethodPost, tt.path, "application/json", tt.body)
			if code != tt.code {
				t.Fatalf("code %d, want %d: %s", code, tt.code, body)
			}
			var st metav1.Status
			if err := json.Unmarshal([]byte(body), &st); err != nil || st.Kind != "Status" {
				t.Fatalf("not a status: %s", body)
			}
			if code == 201 && st.Status != metav1.StatusSuccess {
				t.Errorf("status %+v", st)
			}
			if !strings.Contains(st.Message, tt.message) {
				t.Errorf("message %q lacks %q", st.Message, tt.message)
			}
		})
	}
	for name, node := range map[string]string{"a": "n1", "b": "n2"} {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Spec.NodeName != node {
			t.Fatalf("pod %s node %q, want %q (%v)", name, p.Spec.NodeName, node, err)
		}
		if c := podpkg.Condition(p, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue || c.LastTransitionTime.IsZero() {
			t.Fatalf("pod %s PodScheduled %+v, want True with a transition time", name, c)
		}
	}
	t.Run("client-go Bind", func(t *testing.T) {
		if _, err := pods.Create(ctx, newPod("c").obj(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
		err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n3"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("bind: %v", err)
		}
	})
	t.Run("graceful delete of a bound pod", func(t *testing.T) {
		code, body, _ := h.do(http.MethodDelete, "/api/v1/namespaces/default/pods/a", "", "")
		if code != http.StatusOK {
			t.Fatalf("code %d %s", code, body)
		}
		var p corev1.Pod
		if err := json.Unmarshal([]byte(body), &p); err != nil || p.Kind != "Pod" || p.DeletionTimestamp == nil {
			t.Fatalf("deleted pod %s", body)
		}
		// Grace period 0 removes it now.
		if err := pods.Delete(ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatalf("delete now: %v", err)
		}
		if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get: %v", err)
		}
	})
}

func TestStatusAndFinalize(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	pods := h.client.CoreV1().Pods("default")
	p, err := pods.Create(ctx, newPod("s").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Run("status update changes status only", func(t *testing.T) {
		p := p.DeepCopy()
		p.Status.Phase = corev1.PodRunning
		p.Labels = map[string]string{"ignored": "yes"}
		got, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		if got.Status.Phase != corev1.PodRunning || got.Labels["ignored"] != "" {
			t.Errorf("phase %q labels %v", got.Status.Phase, got.Labels)
		}
	})
	t.Run("main update keeps status", func(t *testing.T) {
		cur, err := pods.Get(ctx, "s", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		cur.Status.Phase = corev1.PodFailed
		got, err := pods.Update(ctx, cur, metav1.UpdateOptions{})
		if err != nil || got.Status.Phase != corev1.PodRunning {
			t.Fatalf("update: %v %v", got.Status.Phase, err)
		}
	})
	t.Run("status patch", func(t *testing.T) {
		code, body, _ := h.do(http.MethodPatch, "/api/v1/namespaces/default/pods/s/status", "application/merge-patch+json",
			`{"status":{"phase":"Succeeded"}}`)
		if code != http.StatusOK || !strings.Contains(body, `"phase":"Succeeded"`) {
			t.Fatalf("code %d %s", code, body)
		}
	})
	t.Run("finalize", func(t *testing.T) {
		nsc := h.client.CoreV1().Namespaces()
		ns, err := nsc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fin"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		ns = ns.DeepCopy()
		ns.Spec.Finalizers = []corev1.FinalizerName{"example.com/x"}
		got, err := nsc.Finalize(ctx, ns, metav1.UpdateOptions{})
		if err != nil || len(got.Spec.Finalizers) != 1 || got.Spec.Finalizers[0] != "example.com/x" {
			t.Fatalf("finalize: %v %v", got, err)
		}
	})
	t.Run("delete of a kind that answers a Status", func(t *testing.T) {
		if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/secrets", "application/json",
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sec"},"stringData":{"a":"b"}}`); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
		code, body, _ := h.do(http.MethodDelete, "/api/v1/namespaces/default/secrets/sec", "application/json", `{"propagationPolicy":"Background"}`)
		if code != http.StatusOK || !strings.Contains(body, `"status":"Success"`) || !strings.Contains(body, `"name":"sec"`) {
			t.Fatalf("code %d %s", code, body)
		}
	})
	t.Run("delete preconditions", func(t *testing.T) {
		err := pods.Delete(ctx, "s", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("wrong"))}})
		if !apierrors.IsConflict(err) {
			t.Fatalf("delete with a wrong uid: %v", err)
		}
	})
	t.Run("deletecollection", func(t *testing.T) {
		for _, n := range []string{"d1", "d2", "keep"} {
			b := newPod(n)
			if n != "keep" {
				b.label("doomed", "yes")
			}
			if _, err := pods.Create(ctx, b.obj(), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create: %v", err)
			}
		}
		if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "doomed=yes"}); err != nil {
			t.Fatalf("deletecollection: %v", err)
		}
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		var names []string
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		if strings.Join(names, ",") != "keep,s" {
			t.Errorf("left %v", names)
		}
	})
}
