package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/persistence"
)

// TestControlPlaneFollowsLeadership drives the control plane with a leadership
// channel: it runs (the gateway writes, /readyz is 200) while the replica leads, and
// stops when it does not; the bootstrap objects are written on each start.
func TestControlPlaneFollowsLeadership(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	store, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := config.Server{RequestTimeout: 10 * time.Second, EventTTL: time.Hour, SchedulerShards: 1,
		ServiceClusterIPRange: "10.254.0.0/16", ServiceNodePortRange: "30000-32767", ClusterDNS: "10.254.0.10",
		NodeController: config.NodeController{NodeMonitorGracePeriod: 40 * time.Second, NodeStartupGracePeriod: time.Minute,
			NodeMonitorPeriod: 5 * time.Second, PodEvictionTimeout: 5 * time.Minute, DeletingPodsQPS: 0.1, DeletingPodsBurst: 10}}
	nodes, services, err := controllerOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Config{Store: store, Log: log, OpenAPI: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(gw.Handler())
	defer hs.Close()
	cp := &controlPlane{cfg: cfg, store: store, gw: gw, log: log, nodes: nodes, services: services,
		server: netip.MustParseAddrPort("127.0.0.1:8080")}
	defer cp.stop()
	leadership := make(chan bool)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { cp.follow(ctx, leadership); close(done) }()
	defer func() { cancel(); <-done }()

	code := func(method, path string) int {
		req, _ := http.NewRequest(method, hs.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := code("GET", "/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("before leading: readyz %d, want 503", got)
	}
	for round := range 2 {
		leadership <- true
		poll.UntilTrue(t, 20*time.Second, "control plane up", func() bool { return code("GET", "/readyz") == http.StatusOK })
		for _, key := range []persistence.Key{{Resource: "namespaces", Name: "default"}, {Resource: "namespaces", Name: "kube-system"},
			{Resource: "services", Namespace: "default", Name: "kubernetes"}} {
			if _, err := store.Get(key); err != nil {
				t.Errorf("round %d: bootstrap %v: %v", round, key, err)
			}
		}
		if got := code("DELETE", "/api/v1/namespaces/default/pods/none"); got != http.StatusNotFound {
			t.Errorf("round %d: a write while leading: %d, want the actors' 404", round, got)
		}
		leadership <- false
		poll.UntilTrue(t, 20*time.Second, "control plane down", func() bool { return code("GET", "/readyz") == http.StatusServiceUnavailable })
		if got := code("DELETE", "/api/v1/namespaces/default/pods/none"); got != http.StatusServiceUnavailable {
			t.Errorf("round %d: a write after leading: %d, want 503", round, got)
		}
	}
}
