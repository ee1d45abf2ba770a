package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/actors/admission"
)

// noConnect is a plugin that refuses every connection and records what it is asked.
type noConnect struct {
	mu   sync.Mutex
	seen []admission.Attributes
}

func (*noConnect) Name() string { return "NoConnect" }

func (p *noConnect) Admit(a *admission.Attributes) error {
	p.mu.Lock()
	p.seen = append(p.seen, *a)
	p.mu.Unlock()
	if a.Operation == admission.Connect {
		return apierrors.NewForbidden(schema.GroupResource{Resource: a.Resource}, a.Name, errors.New("no connections"))
	}
	return nil
}

// last returns the last attributes the plugin saw for resource/name.
func (p *noConnect) last(resource, name string) (admission.Attributes, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.seen) - 1; i >= 0; i-- {
		if a := p.seen[i]; a.Resource == resource && a.Name == name {
			return a, true
		}
	}
	return admission.Attributes{}, false
}

func TestAdmission(t *testing.T) {
	plugin := &noConnect{}
	h := newHarness(t, harnessOptions{admission: admission.Chain{plugin}})
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/api/v1/namespaces/default/pods", podJSON("taken")},
		{"POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"doomed","finalizers":["example.com/hold"]}}`},
		{"DELETE", "/api/v1/namespaces/doomed", ""},
	} {
		if code, body, _ := h.do(step.method, step.path, "application/json", step.body); code >= 300 {
			t.Fatalf("%s %s: %d %s", step.method, step.path, code, body)
		}
	}
	tests := []struct {
		name, method, path, body string
		code                     int
		message                  string // of the Status, when it is one
		op                       admission.Operation
		resource, object, sub    string // what the plugin saw last
		dry                      bool
	}{
		{name: "dry-run create in a missing namespace", method: "POST", path: "/api/v1/namespaces/nowhere/pods?dryRun=All", body: podJSON("n"),
			code: 404, message: `namespaces "nowhere" not found`},
		{name: "dry-run create in a terminating namespace", method: "POST", path: "/api/v1/namespaces/doomed/pods?dryRun=All", body: podJSON("n"),
			code: 403, message: `pods "n" is forbidden: unable to create new content in namespace doomed because it is being terminated`},
		{name: "dry-run delete of default", method: "DELETE", path: "/api/v1/namespaces/default?dryRun=All",
			code: 403, message: `namespaces "default" is forbidden: this namespace may not be deleted`},
		{name: "dry-run create of a taken name", method: "POST", path: "/api/v1/namespaces/default/pods?dryRun=All", body: podJSON("taken"),
			code: 409, message: `pods "taken" already exists`},
		{name: "dry-run create", method: "POST", path: "/api/v1/namespaces/default/pods?dryRun=All", body: podJSON("dry"),
			code: 201, op: admission.Create, resource: "pods", object: "dry", dry: true},
		{name: "dry-run delete", method: "DELETE", path: "/api/v1/namespaces/default/pods/taken?dryRun=All",
			code: 200, op: admission.Delete, resource: "pods", object: "taken", dry: true},
		{name: "status update", method: "PATCH", path: "/api/v1/namespaces/default/pods/taken/status",
			body: `{"status":{"message":"hello"}}`, code: 200, op: admission.Update, resource: "pods", object: "taken", sub: "status"},
		{name: "exec", method: "POST", path: "/api/v1/namespaces/default/pods/taken/exec?command=ls",
			code: 403, message: `pods "taken" is forbidden: no connections`, op: admission.Connect, resource: "pods", object: "taken", sub: "exec"},
		{name: "proxy to a pod port", method: "GET", path: "/api/v1/namespaces/default/pods/http:taken:80/proxy/x",
			code: 403, message: `pods "taken" is forbidden: no connections`, op: admission.Connect, resource: "pods", object: "taken", sub: "proxy"},
		{name: "legacy proxy to a node", method: "GET", path: "/api/v1/proxy/nodes/n1/stats",
			code: 403, message: `nodes "n1" is forbidden: no connections`, op: admission.Connect, resource: "nodes", object: "n1", sub: "proxy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct := "application/json"
			if tc.method == "PATCH" {
				ct = patchMerge
			}
			code, body, _ := h.do(tc.method, tc.path, ct, tc.body)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, body)
			}
			if tc.message != "" {
				var st metav1.Status
				if err := json.Unmarshal([]byte(body), &st); err != nil || st.Kind != "Status" || st.Message != tc.message {
					t.Fatalf("body %s, want the Status %q", body, tc.message)
				}
			}
			if tc.op == "" {
				return
			}
			a, ok := plugin.last(tc.resource, tc.object)
			if !ok || a.Operation != tc.op || a.Subresource != tc.sub || a.User.Name != "system:anonymous" ||
				a.DryRun != tc.dry {
				t.Errorf("plugin saw %+v", a)
			}
		})
	}
	if _, err := h.client.CoreV1().Pods("default").Get(testCtx(t), "taken", metav1.GetOptions{}); err != nil {
		t.Errorf("after a dry-run delete: %v", err)
	}
	if code, _, _ := h.do("GET", "/api/v1/namespaces/default/pods/dry", "", ""); code != http.StatusNotFound {
		t.Errorf("a dry-run create was stored: %d", code)
	}
}
