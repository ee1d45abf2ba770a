package admission

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wantStatus checks err against an expected answer: code 0 is admitted, -1 an error
// that is no Status, else a Status with that code and message.
func wantStatus(t *testing.T, err error, code int32, message string) {
	t.Helper()
	var status apierrors.APIStatus
	switch {
	case code == 0 && err != nil:
		t.Fatalf("refused: %v", err)
	case code == 0:
	case err == nil:
		t.Fatalf("admitted, want %d %q", code, message)
	case code == -1:
		if errors.As(err, &status) {
			t.Fatalf("err %v is a Status, want an internal error", err)
		}
	case !errors.As(err, &status):
		t.Fatalf("err %v is no Status", err)
	case status.Status().Code != code || status.Status().Message != message:
		t.Fatalf("status %d %q, want %d %q", status.Status().Code, status.Status().Message, code, message)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  []string // the chain's plugin names
		err   string
	}{
		{name: "none", names: nil},
		{name: "the default", names: []string{"NamespaceLifecycle"}, want: []string{"NamespaceLifecycle"}},
		{name: "the book's order", names: []string{"NamespaceAutoProvision", "LimitRanger", "SecurityContextDeny"},
			want: []string{"NamespaceAutoProvision", "LimitRanger", "SecurityContextDeny"}},
		{name: "every plugin", names: Names(), want: Names()},
		{name: "blanks skipped", names: []string{" AlwaysAdmit", "", "AlwaysDeny "}, want: []string{"AlwaysAdmit", "AlwaysDeny"}},
		{name: "unknown", names: []string{"AlwaysAdmit", "AlwaysMaybe"},
			err: `admission: unknown plugin "AlwaysMaybe" (known: AlwaysAdmit, AlwaysDeny, DenyExecOnPrivileged, LimitRanger, NamespaceAutoProvision, NamespaceExists, NamespaceLifecycle, ResourceQuota, SecurityContextDeny, ServiceAccount)`},
		{name: "case matters", names: []string{"alwaysadmit"}, err: `admission: unknown plugin "alwaysadmit"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chain, err := New(tc.names, Env{})
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err %v, want %s", err, tc.err)
				}
				if Check(tc.names) == nil {
					t.Fatal("Check admitted the list")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range chain {
				got = append(got, p.Name())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("chain %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAlways(t *testing.T) {
	tests := []struct {
		name    string
		plugin  Plugin
		attrs   Attributes
		code    int32
		message string
	}{
		{name: "admit a create", plugin: AlwaysAdmit{}, attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "default", Name: "p"}},
		{name: "deny a pod create", plugin: AlwaysDeny{}, attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "default", Name: "p"},
			code: 403, message: `Pod "p" is forbidden: Admission control is denying all modifications`},
		{name: "deny a namespace delete", plugin: AlwaysDeny{}, attrs: Attributes{Operation: Delete, Resource: "namespaces", Name: "team"},
			code: 403, message: `Namespace "team" is forbidden: Admission control is denying all modifications`},
		{name: "deny an exec", plugin: AlwaysDeny{}, attrs: Attributes{Operation: Connect, Resource: "pods", Subresource: "exec", Namespace: "default", Name: "p"},
			code: 403, message: `Pod "p" is forbidden: Admission control is denying all modifications`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, tc.plugin.Admit(&tc.attrs), tc.code, tc.message)
		})
	}
}

func TestNamespaceExists(t *testing.T) {
	plugin := NewNamespaceExists(namespaces{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default"}}, "broken": nil})
	tests := []struct {
		name    string
		attrs   Attributes
		code    int32
		message string
	}{
		{name: "create in an existing namespace", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "default", Name: "p"}},
		{name: "create in a missing namespace", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "nowhere", Name: "p"},
			code: 404, message: `namespaces "nowhere" not found`},
		{name: "update in a missing namespace", attrs: Attributes{Operation: Update, Resource: "services", Namespace: "nowhere", Name: "s"},
			code: 404, message: `namespaces "nowhere" not found`},
		{name: "delete in a missing namespace", attrs: Attributes{Operation: Delete, Resource: "pods", Namespace: "nowhere", Name: "p"},
			code: 404, message: `namespaces "nowhere" not found`},
		{name: "connect in a missing namespace", attrs: Attributes{Operation: Connect, Resource: "pods", Subresource: "exec", Namespace: "nowhere", Name: "p"},
			code: 404, message: `namespaces "nowhere" not found`},
		{name: "namespace unreadable", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "broken", Name: "p"}, code: -1},
		{name: "cluster-scoped create", attrs: Attributes{Operation: Create, Resource: "nodes", Name: "n"}},
		{name: "create a namespace", attrs: Attributes{Operation: Create, Resource: "namespaces", Name: "nowhere"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, plugin.Admit(&tc.attrs), tc.code, tc.message)
		})
	}
}

// creator is a NamespaceCreator that records what it creates, or fails with err.
type creator struct {
	created []string
	err     error
}

func (c *creator) CreateNamespace(name string) error {
	if c.err != nil {
		return c.err
	}
	c.created = append(c.created, name)
	return nil
}

func TestNamespaceAutoProvision(t *testing.T) {
	nss := namespaces{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default"}}, "broken": nil}
	tests := []struct {
		name    string
		attrs   Attributes
		fail    error
		created []string
		code    int32
		message string
	}{
		{name: "create in an existing namespace", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "default", Name: "p"}},
		{name: "create in a missing namespace", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "team-a", Name: "p"},
			created: []string{"team-a"}},
		{name: "dry run creates nothing", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "team-a", Name: "p", DryRun: true}},
		{name: "update in a missing namespace", attrs: Attributes{Operation: Update, Resource: "pods", Namespace: "team-a", Name: "p"}},
		{name: "create of a namespace", attrs: Attributes{Operation: Create, Resource: "namespaces", Name: "team-a"}},
		{name: "cluster-scoped create", attrs: Attributes{Operation: Create, Resource: "nodes", Name: "n"}},
		{name: "namespace unreadable", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "broken", Name: "p"}, code: -1},
		{name: "creation fails", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "team-a", Name: "p"},
			fail: errors.New("timeout"), code: 403, message: `Pod "p" is forbidden: timeout`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &creator{err: tc.fail}
			wantStatus(t, NewNamespaceAutoProvision(nss, c).Admit(&tc.attrs), tc.code, tc.message)
			if !slices.Equal(c.created, tc.created) {
				t.Fatalf("created %v, want %v", c.created, tc.created)
			}
		})
	}
}
