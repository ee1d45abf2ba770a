package actors

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// startAdmitting starts a system whose admission chain is plugins.
func startAdmitting(t testing.TB, st *persistence.Store, plugins ...admission.Plugin) *System {
	t.Helper()
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Resources: testResources,
		SyncPacing: -1, Admission: plugins})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// recorder is a plugin that records what it is asked and refuses the names in refuse.
type recorder struct {
	mu     sync.Mutex
	seen   []admission.Attributes
	refuse map[string]bool
}

func (*recorder) Name() string { return "Recorder" }

func (r *recorder) Admit(a *admission.Attributes) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, *a)
	if r.refuse[a.Name] {
		return apierrors.NewForbidden(schema.GroupResource{Resource: a.Resource}, a.Name, errors.New("refused by the recorder"))
	}
	if p, ok := a.Object.(*corev1.Pod); ok && a.Operation == admission.Create {
		p.Annotations = map[string]string{"admitted": "yes"}
	}
	return nil
}

// asked returns what the plugin was asked about the object named name.
func (r *recorder) asked(resource, name string) []admission.Attributes {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []admission.Attributes
	for _, a := range r.seen {
		if a.Resource == resource && a.Name == name {
			out = append(out, a)
		}
	}
	return out
}

func TestProtectedNamespaces(t *testing.T) {
	tests := []struct {
		name      string
		forbidden bool
	}{
		{"default", true},
		{"kube-system", true},
		{"team-a", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			s := startAdmitting(t, st, DefaultAdmission(st)...)
			ctx := context.Background()
			k := persistence.Key{Resource: "namespaces", Name: tc.name}
			if _, err := s.Create(ctx, k, nsObj(tc.name)); err != nil {
				t.Fatal(err)
			}
			_, _, err := s.Delete(ctx, k, DeleteOptions{})
			if got := apierrors.IsForbidden(err); got != tc.forbidden {
				t.Fatalf("delete: %v, forbidden want %v", err, tc.forbidden)
			}
			var status apierrors.APIStatus
			if tc.forbidden && (!errors.As(err, &status) ||
				status.Status().Message != `namespaces "`+tc.name+`" is forbidden: this namespace may not be deleted`) {
				t.Errorf("error %v", err)
			}
		})
	}
}

func TestAdmissionInTheObjectActor(t *testing.T) {
	st := openStore(t)
	rec := &recorder{refuse: map[string]bool{"refused": true}}
	s := startAdmitting(t, st, rec)
	alice := admission.User{Name: "alice", Groups: []string{"devs"}}
	ctx := WithUser(context.Background(), alice)
	podK := func(name string) persistence.Key {
		return persistence.Key{Resource: "pods", Namespace: "default", Name: name}
	}

	t.Run("create, update, delete", func(t *testing.T) {
		stored, err := s.Create(ctx, podK("web"), newPod("default", "web").uid("u-web").obj())
		if err != nil {
			t.Fatal(err)
		}
		if stored.(*corev1.Pod).Annotations["admitted"] != "yes" {
			t.Errorf("the plugin's change was not stored: %v", stored.(*corev1.Pod).Annotations)
		}
		next := stored.DeepCopyObject().(*corev1.Pod)
		next.Status.Phase = corev1.PodRunning
		if _, err := s.Update(WithSubresource(ctx, "status"), podK("web"), next, command.Preconditions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Delete(ctx, podK("web"), DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got := rec.asked("pods", "web")
		if len(got) != 3 {
			t.Fatalf("asked %d times, want 3: %+v", len(got), got)
		}
		want := []struct {
			op  admission.Operation
			sub string
			obj bool
			old bool
		}{{admission.Create, "", true, false}, {admission.Update, "status", true, true}, {admission.Delete, "", false, true}}
		for i, w := range want {
			a := got[i]
			if a.Operation != w.op || a.Subresource != w.sub || (a.Object != nil) != w.obj || (a.OldObject != nil) != w.old ||
				a.Namespace != "default" || a.User.Name != "alice" || a.DryRun {
				t.Errorf("%s: attributes %+v", w.op, a)
			}
		}
	})

	t.Run("a refusal is the answer and stores nothing", func(t *testing.T) {
		_, err := s.Create(ctx, podK("refused"), newPod("default", "refused").uid("u-refused").obj())
		if !apierrors.IsForbidden(err) {
			t.Fatalf("err %v, want the plugin's Forbidden", err)
		}
		if !gone(st, podK("refused")) {
			t.Fatal("a refused pod was stored")
		}
	})

	t.Run("dry runs are admitted, answered and not stored", func(t *testing.T) {
		dry := WithDryRun(ctx)
		obj, err := s.Create(dry, podK("dry"), newPod("default", "dry").uid("u-dry").obj())
		if err != nil {
			t.Fatal(err)
		}
		if p := obj.(*corev1.Pod); p.Name != "dry" || p.Annotations["admitted"] != "yes" {
			t.Errorf("answer %+v", p.ObjectMeta)
		}
		if !gone(st, podK("dry")) {
			t.Fatal("a dry-run create was stored")
		}
		if _, err := s.Create(dry, podK("refused"), newPod("default", "refused").uid("u-refused").obj()); !apierrors.IsForbidden(err) {
			t.Fatalf("dry-run create: %v, want Forbidden", err)
		}
		stored, err := s.Create(ctx, podK("kept"), newPod("default", "kept").uid("u-kept").obj())
		if err != nil {
			t.Fatal(err)
		}
		next := stored.DeepCopyObject().(*corev1.Pod)
		next.Labels = map[string]string{"dry": "run"}
		if obj, err := s.Update(dry, podK("kept"), next, command.Preconditions{}); err != nil || obj.(*corev1.Pod).Labels["dry"] != "run" {
			t.Fatalf("dry-run update: %v %v", obj, err)
		}
		if obj, _, err := s.Delete(dry, podK("kept"), DeleteOptions{}); err != nil || obj.(*corev1.Pod).Name != "kept" {
			t.Fatalf("dry-run delete: %v %v", obj, err)
		}
		it, err := st.Get(podK("kept"))
		if err != nil || it.Object().(*corev1.Pod).Labels["dry"] != "" {
			t.Fatalf("after dry runs: %v %v", it, err)
		}
		for _, a := range rec.asked("pods", "kept")[1:] {
			if !a.DryRun {
				t.Errorf("%s not marked dry run", a.Operation)
			}
		}
	})

	t.Run("a controller's writes are admitted", func(t *testing.T) {
		replicas := int32(2)
		rc := &corev1.ReplicationController{
			TypeMeta:   metav1.TypeMeta{Kind: "ReplicationController", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "frontend", UID: types.UID("uid-rc-frontend"), Generation: 1},
			Spec: corev1.ReplicationControllerSpec{
				Replicas: &replicas,
				Selector: map[string]string{"app": "frontend"},
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "frontend"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.7.9"}}},
				},
			},
		}
		if _, err := s.Create(ctx, persistence.Key{Resource: "replicationcontrollers", Namespace: "default", Name: "frontend"}, rc); err != nil {
			t.Fatal(err)
		}
		var pods []*corev1.Pod
		eventually(t, 20*time.Second, "two pods of the RC", func() bool {
			pods = nil
			st.Snapshot("pods").Ascend("default", "", func(it *persistence.Item) bool {
				if p := it.Object().(*corev1.Pod); p.Labels["app"] == "frontend" {
					pods = append(pods, p)
				}
				return true
			})
			return len(pods) == 2
		})
		for _, p := range pods {
			got := rec.asked("pods", p.Name)
			if len(got) == 0 || got[0].Operation != admission.Create || got[0].User.Name != "" {
				t.Errorf("pod %s: asked %+v, want a create by the control plane", p.Name, got)
			}
			if p.Annotations["admitted"] != "yes" {
				t.Errorf("pod %s: the plugin's change was not stored", p.Name)
			}
		}
		eventually(t, 20*time.Second, "the RC's events admitted", func() bool {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, a := range rec.seen {
				if a.Resource == "events" && a.Operation == admission.Create && a.Object.(*corev1.Event).InvolvedObject.Name == "frontend" {
					return true
				}
			}
			return false
		})
	})

	t.Run("connect", func(t *testing.T) {
		if err := s.AdmitConnect(ctx, podK("refused"), "exec"); !apierrors.IsForbidden(err) {
			t.Fatalf("connect: %v, want Forbidden", err)
		}
		got := rec.asked("pods", "refused")
		if a := got[len(got)-1]; a.Operation != admission.Connect || a.Subresource != "exec" || a.User.Name != "alice" {
			t.Errorf("attributes %+v", a)
		}
	})
}
