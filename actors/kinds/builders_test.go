package kinds

import (
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podBuilder makes test pods: newPod("web").image("nginx").obj().
type podBuilder struct{ p *corev1.Pod }

func newPod(name string) *podBuilder {
	return &podBuilder{p: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25"}}},
	}}
}

func (b *podBuilder) with(f func(p *corev1.Pod)) *podBuilder { f(b.p); return b }

func (b *podBuilder) ctr(f func(c *corev1.Container)) *podBuilder {
	f(&b.p.Spec.Containers[0])
	return b
}

// obj returns the pod after v1 defaulting, as the gateway would validate it.
func (b *podBuilder) obj() *corev1.Pod { defaultPod(b.p); return b.p }

// raw returns the pod without defaulting.
func (b *podBuilder) raw() *corev1.Pod { return b.p }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func int32p(v int32) *int32 { return &v }
func int64p(v int64) *int64 { return &v }

// errKeys renders errors as "path:Type" for compact assertions, sorted.
func errKeys(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Field+":"+string(e.Type))
	}
	sort.Strings(out)
	return out
}

func mustResource(t *testing.T, name string) *Resource {
	t.Helper()
	r, ok := Lookup(name)
	if !ok {
		t.Fatalf("Lookup(%q) not found", name)
	}
	return r
}

// defaulted runs the create pipeline's pure steps: default, prepare.
func defaulted(r *Resource, obj runtime.Object) runtime.Object {
	if r.Default != nil {
		r.Default(obj)
	}
	if r.PrepareForCreate != nil {
		r.PrepareForCreate(obj)
	}
	return obj
}
