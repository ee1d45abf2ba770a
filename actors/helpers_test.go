package actors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// newObject maps a plural resource to an empty object of its type.
func newObject(resource string) (kruntime.Object, error) {
	switch resource {
	case "pods":
		return &corev1.Pod{}, nil
	case "namespaces":
		return &corev1.Namespace{}, nil
	case "services":
		return &corev1.Service{}, nil
	case "replicationcontrollers":
		return &corev1.ReplicationController{}, nil
	case "nodes":
		return &corev1.Node{}, nil
	case "configmaps":
		return &corev1.ConfigMap{}, nil
	case "secrets":
		return &corev1.Secret{}, nil
	case "events":
		return &corev1.Event{}, nil
	}
	return nil, fmt.Errorf("no type for %q", resource)
}

var testResources = []string{"pods", "namespaces", "services", "replicationcontrollers", "nodes", "configmaps", "events"}

// fakeClock is a clock tests move by hand; its timers fire as it moves.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

var _ Clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// AfterFunc arms a timer that fires when Advance passes its time (at once, in its own
// goroutine, when d is not positive).
func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{c: c, at: c.t.Add(d), f: f}
	if d <= 0 {
		go f()
		tm.stopped = true
		return tm
	}
	c.timers = append(c.timers, tm)
	return tm
}

func (tm *fakeTimer) Stop() bool {
	tm.c.mu.Lock()
	defer tm.c.mu.Unlock()
	was := !tm.stopped
	tm.stopped = true
	return was
}

// Advance moves the clock and fires, in time order, the timers it passed.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.stopped:
		case !tm.at.After(c.t):
			tm.stopped = true
			due = append(due, tm)
		default:
			keep = append(keep, tm)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	for _, tm := range due {
		tm.f()
	}
}

func openStore(t testing.TB) *persistence.Store {
	t.Helper()
	st, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	l.SetOutput(io.Discard)
	return l
}

// startSystem starts a system on st; it is stopped before st is closed.
func startSystem(t testing.TB, st *persistence.Store, clock Clock) *System {
	t.Helper()
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Clock: clock, Resources: testResources,
		SyncPacing: -1}) // tests that force a sync rely on it being handled in mailbox order
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop) // cleanups run last-in first-out: before the store closes
	return s
}

// podBuilder builds test pods.
type podBuilder struct{ p *corev1.Pod }

func newPod(ns, name string) *podBuilder {
	return &podBuilder{p: &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name),
			CreationTimestamp: metav1.NewTime(time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)),
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}}
}

func (b *podBuilder) node(n string) *podBuilder  { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) uid(u string) *podBuilder   { b.p.UID = types.UID(u); return b }
func (b *podBuilder) image(i string) *podBuilder { b.p.Spec.Containers[0].Image = i; return b }
func (b *podBuilder) finalizer(f string) *podBuilder {
	b.p.Finalizers = append(b.p.Finalizers, f)
	return b
}
func (b *podBuilder) grace(s int64) *podBuilder {
	b.p.Spec.TerminationGracePeriodSeconds = &s
	return b
}

// raw returns the pod as built, without the API's defaulting (benchmarks of the
// actor system that must not time the defaulting).
func (b *podBuilder) raw() *corev1.Pod { return b.p }

// obj returns the pod as the API would store it: defaulted like a created pod (a
// controller's updates of it are validated as the API validates them).
func (b *podBuilder) obj() *corev1.Pod {
	if r, ok := kinds.Lookup("pods"); ok && r.Default != nil {
		r.Default(b.p)
	}
	return b.p
}

func nsObj(name string) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-ns-" + name)},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
}

func ptr[T any](v T) *T { return &v }

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	poll.UntilTrue(t, within, what, cond)
}

func gone(st *persistence.Store, k persistence.Key) bool {
	_, err := st.Get(k)
	return errors.Is(err, persistence.ErrNotFound)
}

func probe(t testing.TB, s *System, k persistence.Key) *probeReply {
	t.Helper()
	res, err := s.request(context.Background(), k, &probeRequest{envelope{trace: "test", key: k}})
	if err != nil {
		t.Fatalf("probe %v: %v", k, err)
	}
	p, ok := res.(*probeReply)
	if !ok {
		t.Fatalf("probe %v: answer %T %v", k, res, res)
	}
	return p
}

func ptrTime(t time.Time) *metav1.Time { mt := metav1.NewTime(t); return &mt }

func runtimeNumGoroutine() int { return runtime.NumGoroutine() }
