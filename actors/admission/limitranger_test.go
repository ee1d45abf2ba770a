package admission

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// limitRanges is a LimitRangeReader over a map of namespaces; a nil value makes it fail.
type limitRanges map[string][]*corev1.LimitRange

func (l limitRanges) LimitRanges(namespace string) ([]*corev1.LimitRange, error) {
	lrs, ok := l[namespace]
	if ok && lrs == nil {
		return nil, errors.New("store unavailable")
	}
	return lrs, nil
}

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// bookLimitRange is limit-range-1 of the book's walkthrough (ch. 4.4.2), as stored:
// the defaulting of a LimitRange gives the Container item a defaultRequest.
func bookLimitRange() *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limit-range-1", Namespace: "default"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, Max: list("cpu", "2", "memory", "1Gi"), Min: list("cpu", "250m", "memory", "32Mi")},
			{Type: corev1.LimitTypeContainer, Max: list("cpu", "2", "memory", "1Gi"), Min: list("cpu", "250m", "memory", "32Mi"),
				Default: list("cpu", "250m", "memory", "64Mi"), DefaultRequest: list("cpu", "250m", "memory", "64Mi")},
		}}}
}

// redisPod is the book's redis-master-pod, its containers' limits set to limits.
func redisPod(limits ...corev1.ResourceList) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "redis-master-pod", Namespace: "default"}}
	for _, l := range limits {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "master-pod", Image: "kubeguide/redis-master",
			Resources: corev1.ResourceRequirements{Limits: l}})
	}
	return p
}

func TestLimitRanger(t *testing.T) {
	ratio := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "ratio"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: list("cpu", "2")}}}}
	plugin := NewLimitRanger(limitRanges{
		"default": {bookLimitRange()},
		"ratio":   {ratio},
		"broken":  nil,
	})
	const forbidden = `Pod "redis-master-pod" is forbidden: `
	tests := []struct {
		name      string
		namespace string
		pod       *corev1.Pod
		op        Operation
		limits    corev1.ResourceList // of the first container, after admission
		requests  corev1.ResourceList
		code      int32
		message   string
		qos       corev1.PodQOSClass // when set: the pod's QoS class after admission
	}{
		{name: "the book's pod takes the defaults", pod: redisPod(nil),
			limits: list("cpu", "250m", "memory", "64Mi"), requests: list("cpu", "250m", "memory", "64Mi"), qos: corev1.PodQOSGuaranteed},
		{name: "set values win", pod: redisPod(list("memory", "512Mi")),
			limits: list("cpu", "250m", "memory", "512Mi"), requests: list("cpu", "250m", "memory", "512Mi")},
		{name: "the book's 1.5Gi pod", pod: redisPod(list("memory", "1.5Gi")),
			code: 403, message: forbidden + "Maximum memory usage per pod is 1Gi"},
		{name: "two containers over the pod's memory", pod: redisPod(list("memory", "600Mi"), list("memory", "600Mi")),
			code: 403, message: forbidden + "Maximum memory usage per pod is 1Gi"},
		{name: "two containers over the pod's cpu", pod: redisPod(list("cpu", "1500m"), list("cpu", "1500m")),
			code: 403, message: forbidden + "Maximum CPU usage per pod is 2, but requested 3"},
		{name: "under the minimum", pod: redisPod(list("memory", "16Mi")),
			code: 403, message: forbidden + "Minimum memory usage per pod is 32Mi"},
		{name: "under the container's minimum cpu", pod: redisPod(list("cpu", "100m")),
			code: 403, message: forbidden + "Minimum CPU usage per pod is 250m"},
		{name: "no limit ranges", namespace: "elsewhere", pod: redisPod(nil)},
		{name: "update left alone", pod: redisPod(list("memory", "1.5Gi")), op: Update, limits: list("memory", "1.5Gi")},
		{name: "limit ranges unreadable", namespace: "broken", pod: redisPod(nil),
			code: 403, message: forbidden + "Unable to CREATE pods at this time because there was an error enforcing limit ranges"},
		{name: "ratio kept", namespace: "ratio", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "redis-master-pod"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: list("cpu", "1"), Requests: list("cpu", "500m")}}}}},
			limits: list("cpu", "1"), requests: list("cpu", "500m")},
		{name: "ratio broken", namespace: "ratio", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "redis-master-pod"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: list("cpu", "1"), Requests: list("cpu", "250m")}}}}},
			code: 403, message: forbidden + "Maximum CPU limit to request ratio per container is 2, but provided ratio is 4.000000"},
		{name: "ratio takes the limit as the request", namespace: "ratio", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "redis-master-pod"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: list("cpu", "1")}}}}},
			limits: list("cpu", "1"), requests: list("cpu", "1")},
		{name: "ratio with a zero request", namespace: "ratio", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "redis-master-pod"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: list("cpu", "1"), Requests: list("cpu", "0")}}}}},
			code: 403, message: forbidden + "Maximum CPU limit to request ratio per container is 2, but no request is specified or request is 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns, op := tc.namespace, tc.op
			if ns == "" {
				ns = "default"
			}
			if op == "" {
				op = Create
			}
			a := Attributes{Operation: op, Resource: "pods", Namespace: ns, Name: tc.pod.Name, Object: tc.pod}
			wantStatus(t, plugin.Admit(&a), tc.code, tc.message)
			if tc.code != 0 {
				return
			}
			got := tc.pod.Spec.Containers[0].Resources
			if !equal(got.Limits, tc.limits) || !equal(got.Requests, tc.requests) {
				t.Fatalf("limits %v requests %v, want %v %v", got.Limits, got.Requests, tc.limits, tc.requests)
			}
			if tc.qos != "" && tc.pod.Status.QOSClass != tc.qos {
				t.Fatalf("QoS class %q, want %q", tc.pod.Status.QOSClass, tc.qos)
			}
		})
	}
}

func equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if w, ok := b[k]; !ok || q.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
