package gateway

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServiceAllocationErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	svc := func(name, ip string, nodePort int32) *corev1.Service {
		s := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80, NodePort: nodePort}}},
		}
		if nodePort != 0 {
			s.Spec.Type = corev1.ServiceTypeNodePort
		}
		return s
	}
	if _, err := h.client.CoreV1().Services("default").Create(ctx, svc("first", "10.254.0.10", 30080), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	tests := []struct {
		name    string
		svc     *corev1.Service
		field   string
		message string
	}{
		{name: "cluster IP taken", svc: svc("second", "10.254.0.10", 0), field: "spec.clusterIP",
			message: `Service "second" is invalid: spec.clusterIP: Invalid value: "10.254.0.10": provided IP is already allocated`},
		{name: "cluster IP outside the range", svc: svc("third", "10.0.0.1", 0), field: "spec.clusterIP",
			message: `Service "third" is invalid: spec.clusterIP: Invalid value: "10.0.0.1": provided IP is not in the valid range. The range of valid IPs is 10.254.0.0/16`},
		{name: "node port taken", svc: svc("fourth", "", 30080), field: "spec.ports[0].nodePort",
			message: `Service "fourth" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`},
		{name: "node port outside the range", svc: svc("fifth", "", 80), field: "spec.ports[0].nodePort",
			message: `Service "fifth" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.client.CoreV1().Services("default").Create(ctx, tc.svc, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("err = %v, want 422 Invalid", err)
			}
			st := err.(apierrors.APIStatus).Status()
			if st.Code != http.StatusUnprocessableEntity || st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != tc.field {
				t.Fatalf("status %+v, want one cause on %s", st, tc.field)
			}
			if st.Message != tc.message {
				t.Errorf("message %q\n want %q", st.Message, tc.message)
			}
		})
	}
}

func TestDefaultNamespacesCannotBeDeleted(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, name := range []string{"default", "kube-system"} {
		err := h.client.CoreV1().Namespaces().Delete(testCtx(t), name, metav1.DeleteOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("delete %s: %v, want 403 Forbidden", name, err)
		}
		if want := `namespaces "` + name + `" is forbidden: this namespace may not be deleted`; err.Error() != want {
			t.Errorf("message %q, want %q", err.Error(), want)
		}
	}
}
