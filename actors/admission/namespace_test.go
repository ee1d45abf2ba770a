package admission

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// namespaces is a NamespaceReader over a map; a nil value makes it fail.
type namespaces map[string]*corev1.Namespace

func (n namespaces) Namespace(name string) (*corev1.Namespace, bool, error) {
	ns, ok := n[name]
	if ok && ns == nil {
		return nil, false, errors.New("store unavailable")
	}
	return ns, ok, nil
}

func TestNamespaceLifecycle(t *testing.T) {
	now := metav1.Now()
	nss := namespaces{
		"default": {ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		"doomed":  {ObjectMeta: metav1.ObjectMeta{Name: "doomed"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
		"going":   {ObjectMeta: metav1.ObjectMeta{Name: "going", DeletionTimestamp: &now}},
		"broken":  nil,
	}
	plugin := NewNamespaceLifecycle(nss, []string{"default", "kube-system"})
	tests := []struct {
		name    string
		attrs   Attributes
		code    int32  // 0: admitted; -1: an error that is no Status
		message string // of the Status
	}{
		{name: "create in a live namespace", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "default", Name: "p"}},
		{name: "create in a missing namespace", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "nowhere", Name: "p"},
			code: 404, message: `namespaces "nowhere" not found`},
		{name: "create in a terminating namespace", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "doomed", Name: "p"},
			code: 403, message: `pods "p" is forbidden: unable to create new content in namespace doomed because it is being terminated`},
		{name: "create in a namespace being deleted", attrs: Attributes{Operation: Create, Resource: "services", Namespace: "going", Name: "s"},
			code: 403, message: `services "s" is forbidden: unable to create new content in namespace going because it is being terminated`},
		{name: "namespace unreadable", attrs: Attributes{Operation: Create, Resource: "pods", Namespace: "broken", Name: "p"}, code: -1},
		{name: "update in a terminating namespace", attrs: Attributes{Operation: Update, Resource: "pods", Namespace: "doomed", Name: "p"}},
		{name: "delete in a terminating namespace", attrs: Attributes{Operation: Delete, Resource: "pods", Namespace: "doomed", Name: "p"}},
		{name: "connect", attrs: Attributes{Operation: Connect, Resource: "pods", Subresource: "exec", Namespace: "nowhere", Name: "p"}},
		{name: "cluster-scoped create", attrs: Attributes{Operation: Create, Resource: "nodes", Name: "n"}},
		{name: "create a namespace", attrs: Attributes{Operation: Create, Resource: "namespaces", Name: "nowhere"}},
		{name: "delete default", attrs: Attributes{Operation: Delete, Resource: "namespaces", Name: "default"},
			code: 403, message: `namespaces "default" is forbidden: this namespace may not be deleted`},
		{name: "delete kube-system", attrs: Attributes{Operation: Delete, Resource: "namespaces", Name: "kube-system"},
			code: 403, message: `namespaces "kube-system" is forbidden: this namespace may not be deleted`},
		{name: "delete another namespace", attrs: Attributes{Operation: Delete, Resource: "namespaces", Name: "doomed"}},
		{name: "finalize default", attrs: Attributes{Operation: Update, Resource: "namespaces", Subresource: "finalize", Name: "default"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Chain{plugin}.Admit(&tc.attrs)
			var status apierrors.APIStatus
			switch {
			case tc.code == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.code == 0:
			case err == nil:
				t.Fatalf("admitted, want %d", tc.code)
			case tc.code == -1:
				if errors.As(err, &status) {
					t.Fatalf("err %v is a Status, want an internal error", err)
				}
			case !errors.As(err, &status):
				t.Fatalf("err %v is no Status", err)
			case status.Status().Code != tc.code || status.Status().Message != tc.message:
				t.Fatalf("status %d %q, want %d %q", status.Status().Code, status.Status().Message, tc.code, tc.message)
			}
		})
	}
}

// label is a plugin that sets a label, or refuses when refuse is set.
type label struct {
	key    string
	refuse bool
}

func (l label) Name() string { return "label-" + l.key }

func (l label) Admit(a *Attributes) error {
	if l.refuse {
		return apierrors.NewForbidden(corev1.Resource(a.Resource), a.Name, errors.New(l.key))
	}
	if p, ok := a.Object.(*corev1.Pod); ok {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[l.key] = "1"
	}
	return nil
}

func TestChain(t *testing.T) {
	tests := []struct {
		name   string
		chain  Chain
		labels int    // labels set on the object
		refuse string // the refusing plugin's key, "" when admitted
	}{
		{name: "empty", chain: nil},
		{name: "every plugin runs", chain: Chain{label{key: "a"}, label{key: "b"}}, labels: 2},
		{name: "stops at the first refusal", chain: Chain{label{key: "a"}, label{key: "no", refuse: true}, label{key: "c"}},
			labels: 1, refuse: "no"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}
			err := tc.chain.Admit(&Attributes{Operation: Create, Resource: "pods", Namespace: "default", Name: "p", Object: pod})
			if len(pod.Labels) != tc.labels {
				t.Errorf("labels %v, want %d", pod.Labels, tc.labels)
			}
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse != "" && (!apierrors.IsForbidden(err) || err.Error() != `pods "p" is forbidden: `+tc.refuse):
				t.Fatalf("err %v, want the refusal of %s", err, tc.refuse)
			}
		})
	}
}
