package actors

import (
	"context"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/persistence"
)

// denyPods applies AlwaysDeny to pods only, and records its refusals.
type denyPods struct {
	mu      sync.Mutex
	refused []admission.Attributes
}

func (*denyPods) Name() string { return "DenyPods" }

func (d *denyPods) Admit(a *admission.Attributes) error {
	if a.Resource != "pods" {
		return nil
	}
	err := admission.AlwaysDeny{}.Admit(a)
	d.mu.Lock()
	d.refused = append(d.refused, *a)
	d.mu.Unlock()
	return err
}

// TestAlwaysDenyRefusesAControllersWrite: an RC's pod create passes the same chain
// as the API's writes, on behalf of the control plane.
func TestAlwaysDenyRefusesAControllersWrite(t *testing.T) {
	st := openStore(t)
	deny := &denyPods{}
	s := startAdmitting(t, st, deny)
	if _, err := s.Create(context.Background(), rcKey("default", "web"), newRC("default", "web", 2)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the RC's pod create refused", func() error {
		deny.mu.Lock()
		defer deny.mu.Unlock()
		for _, a := range deny.refused {
			if a.Operation == admission.Create && a.User.Name == "" {
				return nil
			}
		}
		return errors.New("no refusal yet")
	})
	if _, all := rcPods(st, "default", "web"); len(all) != 0 {
		t.Fatalf("%d pods stored", len(all))
	}
}

func TestNewAdmission(t *testing.T) {
	tests := []struct {
		name    string
		cfg     AdmissionConfig
		pod     *corev1.Pod
		code    int32 // 0: stored
		message string
	}{
		{name: "auto-provisioned namespace", cfg: AdmissionConfig{Plugins: []string{"NamespaceAutoProvision", "NamespaceLifecycle"}},
			pod: newPod("team-a", "web").obj()},
		{name: "missing namespace", cfg: AdmissionConfig{Plugins: []string{"NamespaceExists"}},
			pod: newPod("team-a", "web").obj(), code: 404, message: `namespaces "team-a" not found`},
		{name: "privileged refused", cfg: AdmissionConfig{Plugins: []string{"NamespaceLifecycle"}},
			pod: privileged(newPod("default", "web").obj()), code: 422,
			message: `Pod "web" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`},
		{name: "privileged allowed", cfg: AdmissionConfig{Plugins: []string{"NamespaceLifecycle"}, AllowPrivileged: true},
			pod: privileged(newPod("default", "web").obj())},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			adm, err := NewAdmission(st, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := startAdmitting(t, st, adm.Chain...)
			adm.Bind(s)
			ctx := context.Background()
			if _, err := s.Create(ctx, persistence.Key{Resource: "namespaces", Name: "default"}, nsObj("default")); err != nil {
				t.Fatal(err)
			}
			_, err = s.Create(ctx, persistence.Key{Resource: "pods", Namespace: tc.pod.Namespace, Name: tc.pod.Name}, tc.pod)
			var status apierrors.APIStatus
			switch {
			case tc.code == 0 && err != nil:
				t.Fatal(err)
			case tc.code == 0:
				if _, err := st.Get(persistence.Key{Resource: "namespaces", Name: tc.pod.Namespace}); err != nil {
					t.Fatalf("namespace %s: %v", tc.pod.Namespace, err)
				}
			case !errors.As(err, &status) || status.Status().Code != tc.code || status.Status().Message != tc.message:
				t.Fatalf("err %v, want %d %q", err, tc.code, tc.message)
			}
		})
	}
	if _, err := NewAdmission(openStore(t), AdmissionConfig{Plugins: []string{"ResourceQuota2"}}); err == nil {
		t.Fatal("an unknown plugin was accepted")
	}
}

func privileged(p *corev1.Pod) *corev1.Pod {
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true)}
	return p
}
