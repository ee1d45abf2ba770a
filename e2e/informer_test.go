package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func clientset(t testing.TB, s *Server) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "informer"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
	}
}

// recorder keeps what an informer's handler saw, in order.
type recorder struct {
	mu     sync.Mutex
	events []string
	lastRV int64
	errs   []string
}

func (r *recorder) add(kind string, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		if d, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
			pod, _ = d.Obj.(*corev1.Pod)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if pod == nil {
		r.errs = append(r.errs, fmt.Sprintf("%s of %T", kind, obj))
		return
	}
	rv, err := strconv.ParseInt(pod.ResourceVersion, 10, 64)
	if err != nil || rv <= r.lastRV {
		r.errs = append(r.errs, fmt.Sprintf("%s %s: resourceVersion %q after %d", kind, pod.Name, pod.ResourceVersion, r.lastRV))
	}
	r.lastRV = rv
	r.events = append(r.events, kind+" "+pod.Name)
}

func (r *recorder) snapshot() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...), append([]string(nil), r.errs...)
}

// TestInformerSeesEveryChangeInOrder runs a client-go shared informer against the
// server and checks it sees every add, update and delete, in order, with rising
// resourceVersions.
func TestInformerSeesEveryChangeInOrder(t *testing.T) {
	s := StartServer(t, "")
	cs := clientset(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pods := cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, testPod("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	rec := &recorder{}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { rec.add("add", obj) },
		UpdateFunc: func(_, obj any) { rec.add("update", obj) },
		DeleteFunc: func(obj any) { rec.add("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}

	want := []string{"add before"}
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("p%d", i)
		if _, err := pods.Create(ctx, testPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "add "+name)
	}
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("p%d", i)
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels["round"] = "2"
		if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "update "+name)
	}
	zero := int64(0)
	for _, name := range []string{"p3", "before", "p0"} {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "delete "+name)
	}

	Eventually(t, 20*time.Second, "informer saw every change", func() error {
		got, _ := rec.snapshot()
		if len(got) < len(want) {
			return fmt.Errorf("saw %d of %d events: %v", len(got), len(want), got)
		}
		return nil
	})
	got, errs := rec.snapshot()
	if len(errs) > 0 {
		t.Fatalf("informer errors: %v", errs)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("informer events:\n got %v\nwant %v", got, want)
	}
}
