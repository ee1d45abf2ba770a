package admission

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

// pod returns a pod web with containers c0.. whose security contexts are scs.
func pod(psc *corev1.PodSecurityContext, scs ...*corev1.SecurityContext) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.PodSpec{SecurityContext: psc}}
	for i, sc := range scs {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + string(rune('0'+i)), Image: "nginx", SecurityContext: sc})
	}
	return p
}

func create(obj *corev1.Pod) Attributes {
	return Attributes{Operation: Create, Resource: "pods", Namespace: "default", Name: obj.Name, Object: obj}
}

func TestSecurityContextDeny(t *testing.T) {
	update := create(pod(nil, &corev1.SecurityContext{RunAsUser: ptr(int64(0))}))
	update.Operation = Update
	status := create(pod(nil, &corev1.SecurityContext{RunAsUser: ptr(int64(0))}))
	status.Operation, status.Subresource = Update, "status"
	tests := []struct {
		name    string
		attrs   Attributes
		code    int32
		message string
	}{
		{name: "no security context", attrs: create(pod(nil, nil))},
		{name: "privileged and capabilities pass", attrs: create(pod(nil, &corev1.SecurityContext{Privileged: ptr(true),
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}))},
		{name: "container runAsUser", attrs: create(pod(nil, nil, &corev1.SecurityContext{RunAsUser: ptr(int64(1000))})),
			code: 403, message: `pods "web" is forbidden: SecurityContext.RunAsUser is forbidden`},
		{name: "container seLinuxOptions", attrs: create(pod(nil, &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1"}})),
			code: 403, message: `pods "web" is forbidden: SecurityContext.SELinuxOptions is forbidden`},
		{name: "pod runAsUser", attrs: create(pod(&corev1.PodSecurityContext{RunAsUser: ptr(int64(0))}, nil)),
			code: 403, message: `pods "web" is forbidden: pod.Spec.SecurityContext.RunAsUser is forbidden`},
		{name: "pod seLinuxOptions", attrs: create(pod(&corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{User: "u"}}, nil)),
			code: 403, message: `pods "web" is forbidden: pod.Spec.SecurityContext.SELinuxOptions is forbidden`},
		{name: "pod supplementalGroups", attrs: create(pod(&corev1.PodSecurityContext{SupplementalGroups: []int64{5}}, nil)),
			code: 403, message: `pods "web" is forbidden: SecurityContext.SupplementalGroups is forbidden`},
		{name: "pod fsGroup", attrs: create(pod(&corev1.PodSecurityContext{FSGroup: ptr(int64(5))}, nil)),
			code: 403, message: `pods "web" is forbidden: SecurityContext.FSGroup is forbidden`},
		{name: "update", attrs: update, code: 403, message: `pods "web" is forbidden: SecurityContext.RunAsUser is forbidden`},
		{name: "status update", attrs: status},
		{name: "other resource", attrs: Attributes{Operation: Create, Resource: "services", Namespace: "default", Name: "s"}},
		{name: "delete", attrs: Attributes{Operation: Delete, Resource: "pods", Namespace: "default", Name: "web"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, SecurityContextDeny{}.Admit(&tc.attrs), tc.code, tc.message)
		})
	}
}

// pods is a PodReader over a map of names; a nil value makes it fail.
type pods map[string]*corev1.Pod

func (p pods) Pod(_, name string) (*corev1.Pod, bool, error) {
	pod, ok := p[name]
	if ok && pod == nil {
		return nil, false, errors.New("store unavailable")
	}
	return pod, ok, nil
}

func TestDenyExecOnPrivileged(t *testing.T) {
	plugin := NewDenyExecOnPrivileged(pods{
		"plain":  pod(nil, nil),
		"priv":   pod(nil, nil, &corev1.SecurityContext{Privileged: ptr(true)}),
		"unpriv": pod(nil, &corev1.SecurityContext{Privileged: ptr(false)}),
		"broken": nil,
	})
	connect := func(sub, name string) Attributes {
		return Attributes{Operation: Connect, Resource: "pods", Subresource: sub, Namespace: "default", Name: name}
	}
	tests := []struct {
		name    string
		attrs   Attributes
		code    int32
		message string
	}{
		{name: "exec into a plain pod", attrs: connect("exec", "plain")},
		{name: "exec into an unprivileged pod", attrs: connect("exec", "unpriv")},
		{name: "exec into a privileged pod", attrs: connect("exec", "priv"),
			code: 403, message: `Pod "priv" is forbidden: cannot exec into or attach to a privileged container`},
		{name: "attach to a privileged pod", attrs: connect("attach", "priv"),
			code: 403, message: `Pod "priv" is forbidden: cannot exec into or attach to a privileged container`},
		{name: "port-forward to a privileged pod", attrs: connect("portforward", "priv")},
		{name: "proxy to a privileged pod", attrs: connect("proxy", "priv")},
		{name: "exec into a missing pod", attrs: connect("exec", "missing")},
		{name: "pod unreadable", attrs: connect("exec", "broken"), code: -1},
		{name: "create a privileged pod", attrs: create(pod(nil, &corev1.SecurityContext{Privileged: ptr(true)}))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, plugin.Admit(&tc.attrs), tc.code, tc.message)
		})
	}
}

func TestPrivilegedPolicy(t *testing.T) {
	priv := &corev1.SecurityContext{Privileged: ptr(true)}
	spec := pod(nil, nil, priv).Spec
	update := create(pod(nil, priv))
	update.Operation = Update
	status := update
	status.Subresource = "status"
	tests := []struct {
		name    string
		attrs   Attributes
		code    int32
		message string
	}{
		{name: "unprivileged pod", attrs: create(pod(nil, &corev1.SecurityContext{Privileged: ptr(false)}))},
		{name: "privileged pod", attrs: create(pod(nil, nil, priv)),
			code: 422, message: `Pod "web" is invalid: spec.containers[1].securityContext.privileged: Forbidden: disallowed by cluster policy`},
		{name: "privileged init container", attrs: create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i", SecurityContext: priv}}, Containers: []corev1.Container{{Name: "c"}}}}),
			code: 422, message: `Pod "web" is invalid: spec.initContainers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`},
		{name: "update", attrs: update,
			code: 422, message: `Pod "web" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`},
		{name: "status update", attrs: status},
		{name: "replication controller", attrs: Attributes{Operation: Create, Resource: "replicationcontrollers", Namespace: "default", Name: "rc",
			Object: &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"},
				Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{Spec: spec}}}},
			code: 422, message: `ReplicationController "rc" is invalid: spec.template.spec.containers[1].securityContext.privileged: Forbidden: disallowed by cluster policy`},
		{name: "pod template", attrs: Attributes{Operation: Update, Resource: "podtemplates", Namespace: "default", Name: "pt",
			Object: &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "pt"}, Template: corev1.PodTemplateSpec{Spec: spec}}},
			code: 422, message: `PodTemplate "pt" is invalid: template.spec.containers[1].securityContext.privileged: Forbidden: disallowed by cluster policy`},
		{name: "delete", attrs: Attributes{Operation: Delete, Resource: "pods", Namespace: "default", Name: "web"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, PrivilegedPolicy{}.Admit(&tc.attrs), tc.code, tc.message)
		})
	}
}
