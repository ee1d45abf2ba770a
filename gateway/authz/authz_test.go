package authz

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestFromRequest(t *testing.T) {
	tests := []struct {
		name, method, path, query string
		want                      Attributes
	}{
		{name: "list pods in a namespace", method: "GET", path: "/api/v1/namespaces/default/pods",
			want: Attributes{Verb: "list", ReadOnly: true, Resource: "pods", Namespace: "default"}},
		{name: "list pods everywhere", method: "GET", path: "/api/v1/pods",
			want: Attributes{Verb: "list", ReadOnly: true, Resource: "pods"}},
		{name: "get a pod", method: "GET", path: "/api/v1/namespaces/ns1/pods/web",
			want: Attributes{Verb: "get", ReadOnly: true, Resource: "pods", Namespace: "ns1", Name: "web"}},
		{name: "watch by query", method: "GET", path: "/api/v1/namespaces/ns1/pods", query: "watch=true",
			want: Attributes{Verb: "watch", ReadOnly: true, Resource: "pods", Namespace: "ns1"}},
		{name: "watch path", method: "GET", path: "/api/v1/watch/namespaces/ns1/pods/web",
			want: Attributes{Verb: "watch", ReadOnly: true, Resource: "pods", Namespace: "ns1", Name: "web"}},
		{name: "create", method: "POST", path: "/api/v1/namespaces/ns1/pods",
			want: Attributes{Verb: "create", Resource: "pods", Namespace: "ns1"}},
		{name: "update status", method: "PUT", path: "/api/v1/namespaces/ns1/pods/web/status",
			want: Attributes{Verb: "update", Resource: "pods", Subresource: "status", Namespace: "ns1", Name: "web"}},
		{name: "patch node", method: "PATCH", path: "/api/v1/nodes/n1",
			want: Attributes{Verb: "patch", Resource: "nodes", Name: "n1"}},
		{name: "delete", method: "DELETE", path: "/api/v1/namespaces/ns1/pods/web",
			want: Attributes{Verb: "delete", Resource: "pods", Namespace: "ns1", Name: "web"}},
		{name: "deletecollection", method: "DELETE", path: "/api/v1/namespaces/ns1/pods",
			want: Attributes{Verb: "deletecollection", Resource: "pods", Namespace: "ns1"}},
		{name: "exec by GET is not read-only", method: "GET", path: "/api/v1/namespaces/ns1/pods/web/exec",
			want: Attributes{Verb: "get", Resource: "pods", Subresource: "exec", Namespace: "ns1", Name: "web"}},
		{name: "logs are read-only", method: "GET", path: "/api/v1/namespaces/ns1/pods/web/log",
			want: Attributes{Verb: "get", ReadOnly: true, Resource: "pods", Subresource: "log", Namespace: "ns1", Name: "web"}},
		{name: "a namespace is in itself", method: "GET", path: "/api/v1/namespaces/dev",
			want: Attributes{Verb: "get", ReadOnly: true, Resource: "namespaces", Namespace: "dev", Name: "dev"}},
		{name: "namespaces", method: "GET", path: "/api/v1/namespaces",
			want: Attributes{Verb: "list", ReadOnly: true, Resource: "namespaces"}},
		{name: "legacy proxy", method: "GET", path: "/api/v1/proxy/namespaces/ns1/services/web/x",
			want: Attributes{Verb: "proxy", Resource: "services", Namespace: "ns1", Name: "web"}},
		{name: "version", method: "GET", path: "/version",
			want: Attributes{Verb: "get", ReadOnly: true}},
		{name: "api discovery", method: "GET", path: "/api/v1",
			want: Attributes{Verb: "get", ReadOnly: true}},
		{name: "post outside the API", method: "POST", path: "/debug/kubeactor/panic",
			want: Attributes{Verb: "post"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			got := FromRequest("bob", []string{"g"}, tt.method, tt.path, q)
			tt.want.User, tt.want.Groups, tt.want.Path = "bob", []string{"g"}, tt.path
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestBookPolicyMatrix decides, for every (user, verb, resource, namespace) of the
// table derived from the book's policy file, what the file allows.
func TestBookPolicyMatrix(t *testing.T) {
	p, err := ParsePolicy([]byte(BookPolicy))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range BookMatrix {
		t.Run(c.String(), func(t *testing.T) {
			a := FromRequest(c.User, c.Groups, c.Method, c.Path(), nil)
			if got, _ := p.Authorize(a); got != c.Allowed {
				t.Fatalf("allowed=%v, want %v (attributes %+v)", got, c.Allowed, a)
			}
		})
	}
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct{ name, line string }{
		{name: "unknown key", line: `{"user": "bob", "namespce": "x"}`},
		{name: "not json", line: `user=bob`},
		{name: "null", line: `null`},
		{name: "array", line: `[{"user":"bob"}]`},
		{name: "two objects", line: `{"user":"a"} {"user":"b"}`},
		{name: "ns and namespace differ", line: `{"ns":"a","namespace":"b"}`},
		{name: "wrong type", line: `{"readonly":"yes"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParsePolicy([]byte("{}\n" + tt.line + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("err = %v, want an error on line 2", err)
			}
		})
	}
}

func TestNewAndForbidden(t *testing.T) {
	a := FromRequest("bob", nil, http.MethodGet, "/api/v1/namespaces/default/pods", nil)
	for _, tt := range []struct {
		name, mode string
		policy     []byte
		allowed    bool
		err        bool
	}{
		{name: "default", allowed: true},
		{name: "AlwaysAllow", mode: ModeAlwaysAllow, allowed: true},
		{name: "AlwaysDeny", mode: ModeAlwaysDeny},
		{name: "ABAC", mode: ModeABAC, policy: []byte(`{"user":"bob","readonly":true}`), allowed: true},
		{name: "ABAC without a file", mode: ModeABAC, err: true},
		{name: "unknown", mode: "RBAC", err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			az, err := New(tt.mode, tt.policy)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v", err)
			}
			if err == nil {
				if ok, _ := az.Authorize(a); ok != tt.allowed {
					t.Fatalf("allowed = %v", ok)
				}
			}
		})
	}
	for _, tt := range []struct{ name, method, path, want string }{
		{"namespaced", "GET", "/api/v1/namespaces/default/pods", `User "bob" cannot list resource "pods" in API group "" in the namespace "default"`},
		{"cluster", "DELETE", "/api/v1/nodes/n1", `User "bob" cannot delete resource "nodes" in API group "" at the cluster scope`},
		{"subresource", "POST", "/api/v1/namespaces/a/pods/p/exec", `User "bob" cannot create resource "pods/exec" in API group "" in the namespace "a"`},
		{"path", "GET", "/version", `User "bob" cannot get path "/version"`},
	} {
		t.Run("forbidden "+tt.name, func(t *testing.T) {
			if got := Forbidden(FromRequest("bob", nil, tt.method, tt.path, nil)); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(BookPolicy))
	f.Add([]byte(`{"user":"*","group":"g","readonly":false}` + "\n\n# c\n"))
	f.Add([]byte(`{"ns":"a","namespace":"a"}`))
	f.Add([]byte("null\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			return
		}
		// The empty policy denies; a parsed one has ns folded into namespace.
		a := FromRequest("bob", []string{"dev"}, "POST", "/api/v1/namespaces/x/pods", nil)
		if ok, _ := (Policy{}).Authorize(a); ok {
			t.Fatal("the empty policy allowed a request")
		}
		for _, r := range p {
			if r.NS != "" {
				t.Fatalf("ns left unmoved in %+v", r)
			}
		}
		_, _ = p.Authorize(a)
	})
}
