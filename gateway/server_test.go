package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

func TestDiscovery(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tests := []struct {
		name, path string
		want       []string // substrings of the body
	}{
		{"api", "/api", []string{`"kind":"APIVersions"`, `"versions":["v1"]`, `"serverAddressByClientCIDRs"`}},
		{"api v1", "/api/v1", []string{`"kind":"APIResourceList"`, `"groupVersion":"v1"`, `"name":"pods"`, `"name":"pods/status"`,
			`"name":"replicationcontrollers/scale"`, `"group":"autoscaling"`, `"name":"pods/binding"`}},
		{"apis", "/apis", []string{`"kind":"APIGroupList"`, `"groups":[{"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}]`}},
		{"version", "/version", []string{`"major":"1"`, `"minor":"0"`, `"gitVersion":"v1.0.0"`, `"gitTreeState":"clean"`, `"goVersion"`}},
		{"healthz", "/healthz", []string{"ok"}},
		{"livez", "/livez", []string{"ok"}},
		{"readyz", "/readyz", []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := h.do(http.MethodGet, tt.path, "", "",
				"Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
			if code != http.StatusOK {
				t.Fatalf("code %d, body %s", code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %s: %s", w, body)
				}
			}
		})
	}
	t.Run("client-go", func(t *testing.T) {
		v, err := h.client.Discovery().ServerVersion()
		if err != nil || v.GitVersion != "v1.0.0" {
			t.Fatalf("version %v, %v", v, err)
		}
		list, err := h.client.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatalf("resources: %v", err)
		}
		found := false
		for _, r := range list.APIResources {
			if r.Name == "pods" && r.Namespaced && r.Kind == "Pod" && containsString(r.ShortNames, "po") {
				found = true
			}
		}
		if !found {
			t.Errorf("pods missing from %v", list.APIResources)
		}
	})
}

func TestCRUD(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	c := h.client.CoreV1()

	t.Run("pods", func(t *testing.T) {
		created, err := c.Pods("default").Create(ctx, newPod("web").label("app", "web").obj(), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.UID == "" || created.CreationTimestamp.IsZero() || created.ResourceVersion == "" || created.Namespace != "default" {
			t.Errorf("system fields not set: %+v", created.ObjectMeta)
		}
		got, err := c.Pods("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || got.UID != created.UID {
			t.Fatalf("get: %v %v", got, err)
		}
		got.Labels["tier"] = "front"
		updated, err := c.Pods("default").Update(ctx, got, metav1.UpdateOptions{})
		if err != nil || updated.Labels["tier"] != "front" || updated.ResourceVersion == got.ResourceVersion {
			t.Fatalf("update: %v %v", updated, err)
		}
		list, err := c.Pods("").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
			t.Fatalf("list: %v %v", list, err)
		}
		if err := c.Pods("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := c.Pods("default").Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get after delete: %v", err)
		}
	})

	t.Run("services", func(t *testing.T) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "frontend"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}
		created, err := c.Services("default").Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		created = created.DeepCopy()
		created.Spec.Ports[0].Port = 81
		if _, err := c.Services("default").Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		if err := c.Services("default").Delete(ctx, "frontend", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})

	t.Run("replicationcontrollers", func(t *testing.T) {
		rc := &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "frontend"},
			Spec: corev1.ReplicationControllerSpec{
				Replicas: ptr.To[int32](2),
				Selector: map[string]string{"app": "web"},
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
				},
			},
		}
		if _, err := c.ReplicationControllers("default").Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
		// The RC's own actor writes its status meanwhile, so an update made from a read
		// may meet a conflict and is retried, as kubectl scale does.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			sc, err := c.ReplicationControllers("default").GetScale(ctx, "frontend", metav1.GetOptions{})
			if err != nil || sc.Spec.Replicas != 2 || sc.Status.Selector != "app=web" {
				t.Fatalf("get scale: %+v %v", sc, err)
			}
			sc.Spec.Replicas = 5
			_, err = c.ReplicationControllers("default").UpdateScale(ctx, "frontend", sc, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("update scale: %v", err)
		}
		got, err := c.ReplicationControllers("default").Get(ctx, "frontend", metav1.GetOptions{})
		if err != nil || *got.Spec.Replicas != 5 {
			t.Fatalf("replicas after scale: %v %v", got, err)
		}
		code, body, _ := h.do(http.MethodPatch, "/api/v1/namespaces/default/replicationcontrollers/frontend/scale",
			"application/merge-patch+json", `{"spec":{"replicas":3}}`)
		if code != http.StatusOK || !strings.Contains(body, `"replicas":3`) || !strings.Contains(body, `"kind":"Scale"`) {
			t.Fatalf("patch scale: %d %s", code, body)
		}
		if err := c.ReplicationControllers("default").Delete(ctx, "frontend", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})

	t.Run("all-namespace POST takes the body's namespace", func(t *testing.T) {
		code, body, _ := h.do(http.MethodPost, "/api/v1/pods", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"sys","namespace":"kube-system"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
		if code != http.StatusCreated || !strings.Contains(body, `"namespace":"kube-system"`) {
			t.Fatalf("code %d body %s", code, body)
		}
		code, body, _ = h.do(http.MethodPost, "/api/v1/pods", "application/json", podJSON("plain"))
		if code != http.StatusCreated || !strings.Contains(body, `"namespace":"default"`) {
			t.Fatalf("code %d body %s", code, body)
		}
	})

	t.Run("generateName", func(t *testing.T) {
		p := newPod("").obj()
		p.GenerateName = "web-"
		got, err := c.Pods("default").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if !strings.HasPrefix(got.Name, "web-") || len(got.Name) != len("web-")+5 {
			t.Errorf("generated name %q", got.Name)
		}
	})

	t.Run("dry run stores nothing", func(t *testing.T) {
		_, err := c.Pods("default").Create(ctx, newPod("dry").obj(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("dry create: %v", err)
		}
		if _, err := c.Pods("default").Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("dry-run pod was stored: %v", err)
		}
	})
}

func TestUpdateConflict(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	pods := h.client.CoreV1().Pods("default")
	first, err := pods.Create(ctx, newPod("x").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	second := first.DeepCopy()
	second.Labels = map[string]string{"a": "1"}
	if _, err := pods.Update(ctx, second, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	stale := first.DeepCopy()
	stale.Labels = map[string]string{"a": "2"}
	_, err = pods.Update(ctx, stale, metav1.UpdateOptions{})
	want := `Operation cannot be fulfilled on pods "x": the object has been modified; please apply your changes to the latest version and try again`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Fatalf("stale update: %v", err)
	}
	// Without a resourceVersion the update is unconditional.
	blind := first.DeepCopy()
	blind.ResourceVersion = ""
	blind.Labels = map[string]string{"a": "3"}
	got, err := pods.Update(ctx, blind, metav1.UpdateOptions{})
	if err != nil || got.Labels["a"] != "3" {
		t.Fatalf("unconditional update: %v %v", got, err)
	}
}

// TestPatch applies the book's example: a strategic merge patch adding a log-tailer
// container next to nginx gives two containers, a merge patch replaces the list. Pod
// containers cannot change after create (as on a real server), so the lists patched
// are a pod template's.
func TestPatch(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	tests := []struct {
		name, contentType, patch string
		containers               []string
	}{
		{"strategic merge adds a container", "application/strategic-merge-patch+json",
			`{"template":{"spec":{"containers":[{"name":"log-tailer","image":"log-tailer-1.0"}]}}}`, []string{"log-tailer", "nginx"}},
		{"merge patch replaces the list", "application/merge-patch+json",
			`{"template":{"spec":{"containers":[{"name":"log-tailer","image":"log-tailer-1.0"}]}}}`, []string{"log-tailer"}},
		{"the book's merge patch type", "application/merge-json-patch+json",
			`{"metadata":{"labels":{"patched":"yes"}}}`, []string{"nginx"}},
		{"json patch", "application/json-patch+json",
			`[{"op":"add","path":"/metadata/labels","value":{"patched":"yes"}}]`, []string{"nginx"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "p" + string(rune('a'+i))
			tmpl := `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"` + name + `"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx-1.0"}]}}}`
			if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/podtemplates", "application/json", tmpl); code != http.StatusCreated {
				t.Fatalf("create: %d %s", code, body)
			}
			code, body, _ := h.do(http.MethodPatch, "/api/v1/namespaces/default/podtemplates/"+name, tt.contentType, tt.patch)
			if code != http.StatusOK {
				t.Fatalf("patch: %d %s", code, body)
			}
			var pt corev1.PodTemplate
			if err := json.Unmarshal([]byte(body), &pt); err != nil {
				t.Fatalf("decode: %v", err)
			}
			var names []string
			for _, c := range pt.Template.Spec.Containers {
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.containers, ",") {
				t.Errorf("containers %v, want %v", names, tt.containers)
			}
		})
	}
	t.Run("pod", func(t *testing.T) {
		if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json", podJSON("web")); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
		code, body, _ := h.do(http.MethodPatch, "/api/v1/namespaces/default/pods/web", "application/strategic-merge-patch+json",
			`{"metadata":{"labels":{"v":"2"}},"spec":{"containers":[{"name":"nginx","image":"nginx-2.0"}]}}`)
		if code != http.StatusOK || !strings.Contains(body, `"image":"nginx-2.0"`) || !strings.Contains(body, `"v":"2"`) {
			t.Fatalf("patch image: %d %s", code, body)
		}
		code, body, _ = h.do(http.MethodPatch, "/api/v1/namespaces/default/pods/web", "application/strategic-merge-patch+json",
			`{"spec":{"containers":[{"name":"log-tailer","image":"log-tailer-1.0"}]}}`)
		if code != http.StatusUnprocessableEntity {
			t.Fatalf("adding a container to a pod: %d %s", code, body)
		}
	})
}

func TestErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{maxBody: 4096})
	if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json", podJSON("taken")); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces", "application/json",
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"doomed","finalizers":["example.com/hold"]}}`); code != http.StatusCreated {
		t.Fatalf("create namespace: %d %s", code, body)
	}
	if code, body, _ := h.do(http.MethodDelete, "/api/v1/namespaces/doomed", "", ""); code != http.StatusOK {
		t.Fatalf("delete namespace: %d %s", code, body)
	}
	tests := []struct {
		name, method, path, contentType, body string
		code                                  int
		reason                                metav1.StatusReason
		message                               string
	}{
		{"body too large", "POST", "/api/v1/namespaces/default/pods", "application/json", strings.Repeat(" ", 5000) + podJSON("big"),
			413, metav1.StatusReasonRequestEntityTooLarge, ""},
		{"malformed json", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"kind":`, 400, metav1.StatusReasonBadRequest, ""},
		{"strict unknown field", "POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s"},"spec":{"foo":1,"containers":[{"name":"c","image":"i"}]}}`,
			400, metav1.StatusReasonBadRequest, `strict decoding error: unknown field "spec.foo"`},
		{"strict duplicate field", "POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s","name":"t"},"spec":{"containers":[{"name":"c","image":"i"}]}}`,
			400, metav1.StatusReasonBadRequest, `duplicate field "metadata.name"`},
		{"wrong kind", "POST", "/api/v1/namespaces/default/pods", "application/json",
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}`, 400, metav1.StatusReasonBadRequest, ""},
		{"invalid", "POST", "/api/v1/namespaces/default/pods", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[]}}`, 422, metav1.StatusReasonInvalid, ""},
		{"namespace mismatch", "POST", "/api/v1/namespaces/default/pods", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"m","namespace":"other"},"spec":{"containers":[{"name":"c","image":"i"}]}}`,
			400, metav1.StatusReasonBadRequest, "the namespace of the provided object does not match the namespace sent on the request"},
		{"missing namespace", "POST", "/api/v1/namespaces/nowhere/pods", "application/json", podJSON("n"),
			404, metav1.StatusReasonNotFound, `namespaces "nowhere" not found`},
		{"terminating namespace", "POST", "/api/v1/namespaces/doomed/pods", "application/json", podJSON("n"),
			403, metav1.StatusReasonForbidden, "unable to create new content in namespace doomed because it is being terminated"},
		{"already exists", "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON("taken"),
			409, metav1.StatusReasonAlreadyExists, `pods "taken" already exists`},
		{"not found", "GET", "/api/v1/namespaces/default/pods/grafana", "", "", 404, metav1.StatusReasonNotFound, `pods "grafana" not found`},
		{"unknown resource", "GET", "/api/v1/namespaces/default/widgets", "", "", 404, metav1.StatusReasonNotFound, ""},
		{"wrong verb", "PUT", "/api/v1/namespaces/default/pods", "application/json", podJSON("v"), 405, metav1.StatusReasonMethodNotAllowed, ""},
		{"server-side apply", "PATCH", "/api/v1/namespaces/default/pods/taken", "application/apply-patch+yaml", "{}",
			415, metav1.StatusReasonUnsupportedMediaType, ""},
		{"bad label selector", "GET", "/api/v1/pods?labelSelector=a%3D%3D%3Db", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"unsupported field", "GET", "/api/v1/pods?fieldSelector=spec.foo%3Dx", "", "", 400, metav1.StatusReasonBadRequest,
			"field label not supported: spec.foo"},
		{"bad continue", "GET", "/api/v1/pods?limit=1&continue=garbage", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"proxy to a missing node", "GET", "/api/v1/proxy/nodes/n1/stats", "", "", 404, metav1.StatusReasonNotFound, `nodes "n1" not found`},
		{"log of an unbound pod", "GET", "/api/v1/namespaces/default/pods/taken/log", "", "", 400, metav1.StatusReasonBadRequest, "pod taken does not have a host assigned"},
		{"name mismatch on update", "PUT", "/api/v1/namespaces/default/pods/taken", "application/json", podJSON("other"),
			400, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (taken)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := h.do(tt.method, tt.path, tt.contentType, tt.body)
			if code != tt.code {
				t.Fatalf("code %d, want %d: %s", code, tt.code, body)
			}
			var st metav1.Status
			if err := json.Unmarshal([]byte(body), &st); err != nil {
				t.Fatalf("not a Status: %v: %s", err, body)
			}
			if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure || int(st.Code) != tt.code || st.Reason != tt.reason {
				t.Errorf("status %+v", st)
			}
			if tt.message != "" && !strings.Contains(st.Message, tt.message) {
				t.Errorf("message %q lacks %q", st.Message, tt.message)
			}
		})
	}
	t.Run("nothing stored by failed requests", func(t *testing.T) {
		for _, name := range []string{"big", "s", "t", "m", "v"} {
			if _, err := h.store.Get(podKey("default", name)); err == nil {
				t.Errorf("pod %s stored", name)
			}
		}
	})
	t.Run("warn on unknown field", func(t *testing.T) {
		code, body, hdr := h.do(http.MethodPost, "/api/v1/namespaces/default/pods?fieldValidation=Warn", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"warned"},"spec":{"foo":1,"containers":[{"name":"c","image":"i"}]}}`)
		if code != http.StatusCreated || !strings.Contains(hdr.Get("Warning"), `unknown field \"spec.foo\"`) {
			t.Fatalf("code %d warning %q body %s", code, hdr.Get("Warning"), body)
		}
	})
	t.Run("audit id", func(t *testing.T) {
		_, _, hdr := h.do(http.MethodGet, "/api/v1/pods", "", "", "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		if got := hdr.Get("Audit-Id"); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("Audit-Id %q", got)
		}
	})
}

func TestYAMLBody(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/yaml",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: yam\nspec:\n  containers:\n  - name: c\n    image: nginx\n")
	if code != http.StatusCreated || !strings.Contains(body, `"name":"yam"`) {
		t.Fatalf("code %d body %s", code, body)
	}
}
