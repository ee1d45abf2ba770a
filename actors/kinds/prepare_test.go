package kinds

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPrepareCreate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	gone := metav1.NewTime(now.Add(-time.Hour))
	tests := []struct {
		name    string
		res     string
		obj     runtime.Object
		invalid string // the Invalid message, "" when it prepares
		check   func(t *testing.T, obj runtime.Object)
	}{
		{name: "system fields set and cleared", res: "pods",
			obj: newPod("web").with(func(p *corev1.Pod) {
				p.UID, p.ResourceVersion, p.SelfLink = "theirs", "7", "/x"
				p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &gone, int64p(3)
				p.Status.Phase = corev1.PodRunning
			}).raw(),
			check: func(t *testing.T, obj runtime.Object) {
				p := obj.(*corev1.Pod)
				if p.UID != "u1" || !p.CreationTimestamp.Time.Equal(now) || p.ResourceVersion != "" || p.SelfLink != "" ||
					p.DeletionTimestamp != nil || p.DeletionGracePeriodSeconds != nil {
					t.Errorf("metadata %+v", p.ObjectMeta)
				}
				if p.Spec.RestartPolicy != corev1.RestartPolicyAlways || p.Spec.DNSPolicy != corev1.DNSClusterFirst {
					t.Errorf("not defaulted: %+v", p.Spec)
				}
				if p.Status.Phase != corev1.PodPending {
					t.Errorf("phase %q, want Pending (PrepareForCreate)", p.Status.Phase)
				}
			}},
		{name: "cluster-scoped kind loses its namespace", res: "nodes",
			obj: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "default"}},
			check: func(t *testing.T, obj runtime.Object) {
				if n := obj.(*corev1.Node); n.Namespace != "" || n.UID != "u1" {
					t.Errorf("metadata %+v", n.ObjectMeta)
				}
			}},
		{name: "invalid", res: "pods", obj: newPod("x").ctr(func(c *corev1.Container) { c.Image = "" }).raw(),
			invalid: `Pod "x" is invalid: spec.containers[0].image: Required value`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := PrepareCreate(mustResource(t, tc.res), tc.obj, "u1", now)
			if tc.invalid != "" {
				if !apierrors.IsInvalid(err) || err.Error() != tc.invalid {
					t.Fatalf("err %v, want Invalid %q", err, tc.invalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, tc.obj)
		})
	}
}

func TestPrepareUpdate(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	old := newPod("web").with(func(p *corev1.Pod) {
		p.UID, p.CreationTimestamp, p.Generation, p.ResourceVersion = "u1", created, 4, "9"
		p.Status.Phase = corev1.PodRunning
	}).obj()
	tests := []struct {
		name    string
		mode    UpdateMode
		change  func(p *corev1.Pod)
		invalid bool
		check   func(t *testing.T, p *corev1.Pod)
	}{
		{name: "main keeps the system fields and the status", mode: UpdateMain,
			change: func(p *corev1.Pod) {
				p.UID, p.Generation, p.CreationTimestamp = "", 1, metav1.Time{}
				p.Labels = map[string]string{"a": "b"}
				p.Status.Phase = corev1.PodFailed
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if p.UID != "u1" || p.Generation != 4 || !p.CreationTimestamp.Equal(&created) || p.ResourceVersion != "10" {
					t.Errorf("metadata %+v", p.ObjectMeta)
				}
				if p.Labels["a"] != "b" || p.Status.Phase != corev1.PodRunning {
					t.Errorf("labels %v phase %q", p.Labels, p.Status.Phase)
				}
			}},
		{name: "status keeps the spec", mode: UpdateStatus,
			change: func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded; p.Labels = map[string]string{"a": "b"} },
			check: func(t *testing.T, p *corev1.Pod) {
				if p.Status.Phase != corev1.PodSucceeded || p.Labels["a"] == "b" {
					t.Errorf("labels %v phase %q", p.Labels, p.Status.Phase)
				}
			}},
		{name: "raw takes the object as it is", mode: UpdateRaw,
			change: func(p *corev1.Pod) { p.Spec.NodeName = "n1"; p.Spec.Containers = nil },
			check: func(t *testing.T, p *corev1.Pod) {
				if p.Spec.NodeName != "n1" || p.ResourceVersion != "10" {
					t.Errorf("nodeName %q rv %q", p.Spec.NodeName, p.ResourceVersion)
				}
			}},
		{name: "main validates the update", mode: UpdateMain,
			change: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "other" }, invalid: true},
		{name: "status takes no spec change, valid or not", mode: UpdateStatus,
			change: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "Not Valid"; p.Status.Phase = corev1.PodFailed },
			check: func(t *testing.T, p *corev1.Pod) {
				if p.Spec.Containers[0].Name != old.Spec.Containers[0].Name || p.Status.Phase != corev1.PodFailed {
					t.Errorf("container %q phase %q", p.Spec.Containers[0].Name, p.Status.Phase)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := old.DeepCopy()
			tc.change(obj)
			err := PrepareUpdate(mustResource(t, "pods"), tc.mode, obj, old, 10)
			if tc.invalid {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("err %v, want Invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, obj)
		})
	}
}

// TestPrepareUpdateLeavesOldAlone: PrepareUpdate reads old, the stored object that
// every reader shares, and never changes it, not even through what obj took of it
// and is changed later (the gateway passes the stored object itself).
func TestPrepareUpdateLeavesOldAlone(t *testing.T) {
	deleted := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	grace := int64(30)
	withMeta := func(m *metav1.ObjectMeta) {
		m.UID, m.ResourceVersion, m.Generation = "u1", "9", 2
		m.Labels, m.Annotations = map[string]string{"a": "b"}, map[string]string{"n": "1"}
		m.DeletionTimestamp, m.DeletionGracePeriodSeconds = &deleted, &grace
		m.Finalizers = []string{"f"}
	}
	pod := newPod("web").with(func(p *corev1.Pod) {
		withMeta(&p.ObjectMeta)
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}).obj()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24", PodCIDRs: []string{"10.244.1.0/24"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	withMeta(&node.ObjectMeta)
	tests := []struct {
		name     string
		resource string
		mode     UpdateMode
		old      runtime.Object
	}{
		{name: "pod", resource: "pods", mode: UpdateMain, old: pod},
		{name: "pod status", resource: "pods", mode: UpdateStatus, old: pod},
		{name: "node", resource: "nodes", mode: UpdateMain, old: node},
		{name: "node status", resource: "nodes", mode: UpdateStatus, old: node},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.old.DeepCopyObject()
			obj := tc.old.DeepCopyObject()
			if err := PrepareUpdate(mustResource(t, tc.resource), tc.mode, obj, tc.old, 10); err != nil {
				t.Fatal(err)
			}
			// Change everything obj may have taken of old, in place.
			m, _ := meta.Accessor(obj)
			m.GetLabels()["a"] = "changed"
			m.GetAnnotations()["n"] = "changed"
			m.GetFinalizers()[0] = "changed"
			m.GetDeletionTimestamp().Time = time.Time{}
			*m.GetDeletionGracePeriodSeconds() = 1
			switch o := obj.(type) {
			case *corev1.Pod:
				o.Status.Conditions[0].Status = corev1.ConditionFalse
				o.Spec.Containers[0].Image = "changed"
			case *corev1.Node:
				o.Status.Conditions[0].Status = corev1.ConditionFalse
				o.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("9")
				o.Spec.PodCIDRs[0] = "changed"
			}
			if !apiequality.Semantic.DeepEqual(tc.old, want) {
				t.Errorf("old changed:\n%+v\nwant\n%+v", tc.old, want)
			}
		})
	}
}

// TestStatusUpdateValidation: a status update is validated by the kind's
// ValidateStatusUpdate when it has one, by ValidateUpdate otherwise; an update of the
// resource itself always by ValidateUpdate.
func TestStatusUpdateValidation(t *testing.T) {
	// validation is "" for none, "pass" or "refuse".
	validation := func(name, how string) func(obj, old runtime.Object) field.ErrorList {
		switch how {
		case "pass":
			return func(runtime.Object, runtime.Object) field.ErrorList { return nil }
		case "refuse":
			return func(runtime.Object, runtime.Object) field.ErrorList {
				return field.ErrorList{field.Forbidden(field.NewPath(name), "refused")}
			}
		}
		return nil
	}
	tests := []struct {
		name           string
		update, status string // how ValidateUpdate and ValidateStatusUpdate answer
		mode           UpdateMode
		wantRefusal    string // the validation that refuses, "" when none does
	}{
		{name: "status, its own validation", update: "pass", status: "refuse", mode: UpdateStatus, wantRefusal: "status"},
		{name: "status, its own validation passes", update: "refuse", status: "pass", mode: UpdateStatus},
		{name: "status, no validation of its own", update: "refuse", mode: UpdateStatus, wantRefusal: "update"},
		{name: "main", update: "refuse", status: "refuse", mode: UpdateMain, wantRefusal: "update"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := *mustResource(t, "pods")
			r.ValidateUpdate, r.ValidateStatusUpdate = validation("update", tt.update), validation("status", tt.status)
			old := newPod("web").with(func(p *corev1.Pod) { p.ResourceVersion = "3" }).obj()
			err := PrepareUpdate(&r, tt.mode, old.DeepCopy(), old, 4)
			if tt.wantRefusal == "" {
				if err != nil {
					t.Fatalf("err %v, want none", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.wantRefusal) {
				t.Fatalf("err %v, want Invalid by %q", err, tt.wantRefusal)
			}
		})
	}
}
