package gateway

import (
	"bytes"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// protoBody is obj in the enveloped protobuf client-go sends.
func protoBody(t *testing.T, obj runtime.Object) string {
	t.Helper()
	setKind(obj)
	var buf bytes.Buffer
	if err := protobufInfo.Serializer.Encode(obj, &buf); err != nil {
		t.Fatalf("encode: %v", err)
	}
	return buf.String()
}

// Protobuf request bodies create and update the core kinds with the validation JSON
// bodies get: an invalid object or a body of the wrong kind is refused and stores
// nothing.
func TestProtobufRequestBodies(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	const pb = "application/vnd.kubernetes.protobuf"
	pod := newPod("pb-pod").obj()
	noContainers := newPod("pb-bad").obj()
	noContainers.Spec.Containers = nil
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "pb-rc"}, Spec: corev1.ReplicationControllerSpec{
		Replicas: new(int32), Selector: map[string]string{"app": "pb"},
		Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pb"}}, Spec: pod.Spec},
	}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "pb-svc"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "pb"}, Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
	}}
	tests := []struct {
		name, method, path string
		body               runtime.Object
		raw                string // instead of body
		want               int
	}{
		{name: "pod", method: http.MethodPost, path: "/api/v1/namespaces/default/pods", body: pod, want: http.StatusCreated},
		{name: "replication controller", method: http.MethodPost, path: "/api/v1/namespaces/default/replicationcontrollers", body: rc, want: http.StatusCreated},
		{name: "service", method: http.MethodPost, path: "/api/v1/namespaces/default/services", body: svc, want: http.StatusCreated},
		{name: "secret", method: http.MethodPost, path: "/api/v1/namespaces/default/secrets", body: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pb-secret"}, Data: map[string][]byte{"k": []byte("v")}}, want: http.StatusCreated},
		{name: "node", method: http.MethodPost, path: "/api/v1/nodes", body: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pb-node"}}, want: http.StatusCreated},
		{name: "namespace", method: http.MethodPost, path: "/api/v1/namespaces", body: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pb-ns"}}, want: http.StatusCreated},
		{name: "invalid pod", method: http.MethodPost, path: "/api/v1/namespaces/default/pods", body: noContainers, want: http.StatusUnprocessableEntity},
		{name: "wrong kind", method: http.MethodPost, path: "/api/v1/namespaces/default/pods", body: svc, want: http.StatusBadRequest},
		{name: "garbage", method: http.MethodPost, path: "/api/v1/namespaces/default/pods", raw: "k8s\x00\xff\xff", want: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.raw
			if tt.body != nil {
				body = protoBody(t, tt.body.DeepCopyObject())
			}
			code, resp, _ := h.do(tt.method, tt.path, pb, body)
			if code != tt.want {
				t.Fatalf("%s %s: %d %s, want %d", tt.method, tt.path, code, resp, tt.want)
			}
		})
	}
	if _, err := h.client.CoreV1().Pods("default").Get(testCtx(t), "pb-bad", metav1.GetOptions{}); err == nil {
		t.Fatal("the invalid pod was stored")
	}

	// An update in protobuf, and one that breaks validation.
	got, err := h.client.CoreV1().Pods("default").Get(testCtx(t), "pb-pod", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Labels = map[string]string{"updated": "protobuf"}
	if code, resp, _ := h.do(http.MethodPut, "/api/v1/namespaces/default/pods/pb-pod", pb, protoBody(t, got.DeepCopy())); code != http.StatusOK {
		t.Fatalf("update: %d %s", code, resp)
	}
	bad := got.DeepCopy()
	bad.ResourceVersion = ""
	bad.Spec.Containers[0].Image = ""
	if code, resp, _ := h.do(http.MethodPut, "/api/v1/namespaces/default/pods/pb-pod", pb, protoBody(t, bad)); code != http.StatusUnprocessableEntity {
		t.Fatalf("invalid update: %d %s, want 422", code, resp)
	}
	after, err := h.client.CoreV1().Pods("default").Get(testCtx(t), "pb-pod", metav1.GetOptions{})
	if err != nil || after.Labels["updated"] != "protobuf" || after.Spec.Containers[0].Image != "nginx" {
		t.Fatalf("after updates: %+v %v", after, err)
	}
}
