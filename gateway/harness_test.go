package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// harness is a running API server on a real in-memory store and actor system.
type harness struct {
	t      testing.TB
	store  *persistence.Store
	server *Server
	http   *httptest.Server
	client kubernetes.Interface
	config *rest.Config
}

type harnessOptions struct {
	changeLogWindow  int64
	maxBody          int64
	bookmarkInterval time.Duration
	profiling        bool
	admission        admission.Chain // plugins after the server's default chain
	// admissionControl, when not nil, replaces the chain with the server's for this
	// --admission-control list (privileged containers allowed unless denyPrivileged).
	admissionControl []string
	denyPrivileged   bool
	tracer           *tracing.Tracer // tracing_test.go
	// scheduler runs the scheduler and the node controller's timing of nodes, as the
	// server does (heartbeat_bench_test.go).
	scheduler bool
	nodes     actors.NodeOptions
	// onDisk opens the store on a temporary directory (fsync and all), not in memory.
	onDisk bool
}

// newObject is the store's type registry, from the resource table.
func newObject(name string) (runtime.Object, error) {
	r, ok := kinds.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no resource %q", name)
	}
	return r.New(), nil
}

func newHarness(t testing.TB, o harnessOptions) *harness {
	t.Helper()
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	log.SetOutput(io.Discard)
	po := persistence.Options{InMemory: true, NewObject: newObject, ChangeLogWindow: o.changeLogWindow}
	if o.onDisk {
		po.InMemory, po.Dir = false, t.TempDir()
	}
	store, err := persistence.Open(po)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	chain := append(actors.DefaultAdmission(store), o.admission...)
	var adm *actors.Admission
	if o.admissionControl != nil {
		if adm, err = actors.NewAdmission(store, actors.AdmissionConfig{Plugins: o.admissionControl, AllowPrivileged: !o.denyPrivileged}); err != nil {
			t.Fatalf("admission: %v", err)
		}
		chain = adm.Chain
	}
	sys, err := actors.Start(actors.Options{Store: store, Log: log, Admission: chain, Tracer: o.tracer,
		Scheduler: o.scheduler, Nodes: o.nodes})
	if err != nil {
		t.Fatalf("start actors: %v", err)
	}
	if adm != nil {
		adm.Bind(sys)
	}
	srv, err := New(Config{Store: store, Actors: sys, Log: log, MaxBodyBytes: o.maxBody, BookmarkInterval: o.bookmarkInterval,
		Profiling: o.profiling, OpenAPI: http.NotFoundHandler(), Tracer: o.tracer})
	if err != nil {
		t.Fatalf("new gateway: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Bootstrap(ctx); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	cfg := &rest.Config{Host: hs.URL, QPS: -1}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		sys.Stop()
		_ = store.Close()
	})
	return &harness{t: t, store: store, server: srv, http: hs, client: client, config: cfg}
}

// useProtobuf makes h.client speak protobuf, requests and responses.
func (h *harness) useProtobuf() {
	h.t.Helper()
	cfg := rest.CopyConfig(h.config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		h.t.Fatalf("client: %v", err)
	}
	h.client, h.config = client, cfg
}

// do sends a raw request and returns the status code and body.
func (h *harness) do(method, path, contentType, body string, header ...string) (int, string, http.Header) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatalf("request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, string(data), resp.Header
}

// ctx is a test context with a deadline.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	poll.UntilTrue(t, 10*time.Second, what, cond)
}

// podBuilder builds test pods.
type podBuilder struct{ p *corev1.Pod }

func newPod(name string) *podBuilder {
	return &podBuilder{p: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
	}}
}

func (b *podBuilder) ns(ns string) *podBuilder { b.p.Namespace = ns; return b }
func (b *podBuilder) label(k, v string) *podBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	b.p.Labels[k] = v
	return b
}
func (b *podBuilder) node(n string) *podBuilder { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) obj() *corev1.Pod          { return b.p.DeepCopy() }

func podJSON(name string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}`, name)
}

func podKey(ns, name string) persistence.Key {
	return persistence.Key{Resource: "pods", Namespace: ns, Name: name}
}
