package actors

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// A small range: usable 10.0.0.1-10.0.0.6, the first kept for the kubernetes service.
var testServiceOptions = ServiceOptions{
	ClusterIPRange: netip.MustParsePrefix("10.0.0.0/29"),
	NodePortRange:  utilnet.PortRange{Base: 30000, Size: 5},
}

func svcKey(ns, name string) persistence.Key {
	return persistence.Key{Resource: "services", Namespace: ns, Name: name}
}

// svcBuilder builds services as the gateway hands them over: defaulted and prepared.
type svcBuilder struct{ s *corev1.Service }

func newSvc(name string) *svcBuilder {
	return &svcBuilder{&corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-svc-" + name)},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{
			{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
		}},
	}}
}

func (b *svcBuilder) ip(ip string) *svcBuilder { b.s.Spec.ClusterIP = ip; return b }
func (b *svcBuilder) nodePort(p int32) *svcBuilder {
	b.s.Spec.Type = corev1.ServiceTypeNodePort
	b.s.Spec.Ports[0].NodePort = p
	return b
}
func (b *svcBuilder) selector(k, v string) *svcBuilder {
	b.s.Spec.Selector = map[string]string{k: v}
	return b
}
func (b *svcBuilder) targetPort(t intstr.IntOrString) *svcBuilder {
	b.s.Spec.Ports[0].TargetPort = t
	return b
}
func (b *svcBuilder) obj() *corev1.Service { return b.s }

func createSvc(s *System, svc *corev1.Service) (*corev1.Service, error) {
	obj, err := s.Create(context.Background(), svcKey(svc.Namespace, svc.Name), svc)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Service), nil
}

// invalidField returns the field of an InvalidError, or "".
func invalidField(err error) string {
	var inv *InvalidError
	if errors.As(err, &inv) && len(inv.Causes) == 1 {
		return inv.Causes[0].Field
	}
	return ""
}

func TestServiceAllocation(t *testing.T) {
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
	inRange := func(svc *corev1.Service) error {
		ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil || !testServiceOptions.ClusterIPRange.Contains(ip) || ip.String() == "10.0.0.1" {
			return fmt.Errorf("cluster IP %q not allocated from the range", svc.Spec.ClusterIP)
		}
		if len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP {
			return fmt.Errorf("clusterIPs %v", svc.Spec.ClusterIPs)
		}
		return nil
	}
	tests := []struct {
		name      string // also the service's name: they are created in order
		svc       *corev1.Service
		wantField string // the field refused, "" when created
		check     func(*corev1.Service) error
	}{
		// Chosen values first: the automatic ones are drawn at random.
		{name: "chosen", svc: newSvc("chosen").ip("10.0.0.5").obj(), check: func(s *corev1.Service) error {
			if s.Spec.ClusterIP != "10.0.0.5" {
				return fmt.Errorf("cluster IP %s, want the chosen 10.0.0.5", s.Spec.ClusterIP)
			}
			return nil
		}},
		{name: "taken", svc: newSvc("taken").ip("10.0.0.5").obj(), wantField: "spec.clusterIP"},
		{name: "outside", svc: newSvc("outside").ip("10.1.0.1").obj(), wantField: "spec.clusterIP"},
		{name: "refused-port", svc: newSvc("refused-port").ip("10.0.0.4").nodePort(31000).obj(), wantField: "spec.ports[0].nodePort"},
		{name: "after-refused", svc: newSvc("after-refused").ip("10.0.0.4").obj(), check: func(s *corev1.Service) error {
			if s.Spec.ClusterIP != "10.0.0.4" { // the refused create gave it back
				return fmt.Errorf("cluster IP %s, want 10.0.0.4", s.Spec.ClusterIP)
			}
			return nil
		}},
		{name: "nodeport-chosen", svc: newSvc("nodeport-chosen").nodePort(30004).obj(), check: func(s *corev1.Service) error {
			if p := s.Spec.Ports[0].NodePort; p != 30004 {
				return fmt.Errorf("node port %d, want 30004", p)
			}
			return nil
		}},
		{name: "nodeport-taken", svc: newSvc("nodeport-taken").nodePort(30004).obj(), wantField: "spec.ports[0].nodePort"},
		{name: "nodeport-outside", svc: newSvc("nodeport-outside").nodePort(31000).obj(), wantField: "spec.ports[0].nodePort"},
		{name: "headless", svc: newSvc("headless").ip(corev1.ClusterIPNone).obj(), check: func(s *corev1.Service) error {
			if s.Spec.ClusterIP != corev1.ClusterIPNone {
				return fmt.Errorf("headless got %s", s.Spec.ClusterIP)
			}
			return nil
		}},
		{name: "auto", svc: newSvc("auto").obj(), check: inRange},
		{name: "nodeport-auto", svc: newSvc("nodeport-auto").nodePort(0).obj(), check: func(s *corev1.Service) error {
			if p := s.Spec.Ports[0].NodePort; p < 30000 || p > 30003 {
				return fmt.Errorf("node port %d not a free one of the range", p)
			}
			return inRange(s)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := createSvc(s, tc.svc)
			if tc.wantField != "" {
				if f := invalidField(err); f != tc.wantField {
					t.Fatalf("err = %v, want an InvalidError on %s", err, tc.wantField)
				}
				if !gone(st, svcKey("default", tc.name)) {
					t.Fatalf("refused service stored")
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if err := tc.check(got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestServiceRelease(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		first   *corev1.Service
		release func(t *testing.T, s *System)
		again   *corev1.Service // takes what first held; created once released
	}{
		{
			name: "delete frees the IP and node port", first: newSvc("a").ip("10.0.0.3").nodePort(30002).obj(),
			release: func(t *testing.T, s *System) {
				if _, _, err := s.Delete(ctx, svcKey("default", "a"), DeleteOptions{}); err != nil {
					t.Fatalf("delete: %v", err)
				}
			},
			again: newSvc("b").ip("10.0.0.3").nodePort(30002).obj(),
		},
		{
			name: "a create refused by the actor frees what it claimed", first: newSvc("a").ip("10.0.0.2").obj(),
			release: func(t *testing.T, s *System) {
				_, err := createSvc(s, newSvc("a").ip("10.0.0.3").obj())
				if !errors.Is(err, persistence.ErrAlreadyExists) {
					t.Fatalf("second create: %v, want already exists", err)
				}
			},
			again: newSvc("b").ip("10.0.0.3").obj(),
		},
		{
			name: "an update back to ClusterIP frees the node port", first: newSvc("a").nodePort(30002).obj(),
			release: func(t *testing.T, s *System) {
				it, err := s.env.store.Get(svcKey("default", "a"))
				if err != nil {
					t.Fatal(err)
				}
				next := it.Object().(*corev1.Service).DeepCopy()
				next.Spec.Type, next.Spec.Ports[0].NodePort = corev1.ServiceTypeClusterIP, 0
				if _, err := s.Update(ctx, svcKey("default", "a"), next, command.Preconditions{}); err != nil {
					t.Fatalf("update: %v", err)
				}
			},
			again: newSvc("b").nodePort(30002).obj(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openControllerStore(t)
			s := startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
			if _, err := createSvc(s, tc.first); err != nil {
				t.Fatalf("create: %v", err)
			}
			tc.release(t, s)
			// The release follows the actor's report, which trails its answer.
			waitFor(t, "released values reused", func() error {
				_, err := createSvc(s, tc.again.DeepCopy())
				return err
			})
		})
	}
}

func TestServiceUpdateAllocatesNodePort(t *testing.T) {
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
	created, err := createSvc(s, newSvc("a").obj())
	if err != nil {
		t.Fatal(err)
	}
	next := created.DeepCopy()
	next.Spec.Type = corev1.ServiceTypeNodePort
	obj, err := s.Update(context.Background(), svcKey("default", "a"), next, command.Preconditions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	got := obj.(*corev1.Service)
	if p := got.Spec.Ports[0].NodePort; p < 30000 || p > 30004 || got.Spec.ClusterIP != created.Spec.ClusterIP {
		t.Fatalf("after update: node port %d, cluster IP %s (was %s)", p, got.Spec.ClusterIP, created.Spec.ClusterIP)
	}
	// Updating again with the same node port is not a conflict with itself.
	again := got.DeepCopy()
	again.Labels = map[string]string{"x": "y"}
	if _, err := s.Update(context.Background(), svcKey("default", "a"), again, command.Preconditions{}); err != nil {
		t.Fatalf("second update: %v", err)
	}
}

func TestServiceAllocationsSurviveRestart(t *testing.T) {
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
	if _, err := createSvc(s, newSvc("a").ip("10.0.0.2").nodePort(30001).obj()); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s = startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
	if _, err := createSvc(s, newSvc("b").ip("10.0.0.2").obj()); invalidField(err) != "spec.clusterIP" {
		t.Fatalf("IP held before the restart: err = %v", err)
	}
	if _, err := createSvc(s, newSvc("c").nodePort(30001).obj()); invalidField(err) != "spec.ports[0].nodePort" {
		t.Fatalf("node port held before the restart: err = %v", err)
	}
	if _, err := createSvc(s, newSvc("d").ip("10.0.0.3").obj()); err != nil {
		t.Fatalf("free IP after restart: %v", err)
	}
}

// webPod is a pod the web service selects, with a named container port.
func webPod(name, ip string, ready bool) *corev1.Pod {
	p := newPod("default", name).node("n1").obj()
	p.Labels = map[string]string{"app": "web"}
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	p.Status.PodIP = ip
	p.Status.Phase = corev1.PodRunning
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

// addresses lists the ready and not ready pod names of the stored endpoints.
func addresses(st *persistence.Store, name string) (ready, notReady []string, ports []int32, err error) {
	it, err := st.Get(endpointsKey("default", name))
	if err != nil {
		return nil, nil, nil, err
	}
	for _, ss := range it.Object().(*corev1.Endpoints).Subsets {
		for _, a := range ss.Addresses {
			ready = append(ready, a.TargetRef.Name)
		}
		for _, a := range ss.NotReadyAddresses {
			notReady = append(notReady, a.TargetRef.Name)
		}
		for _, p := range ss.Ports {
			ports = append(ports, p.Port)
		}
	}
	return ready, notReady, ports, nil
}

func TestEndpointsFollowPods(t *testing.T) {
	ctx := context.Background()
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
	if _, err := createSvc(s, newSvc("web").selector("app", "web").targetPort(intstr.FromString("http")).obj()); err != nil {
		t.Fatal(err)
	}
	put := func(p *corev1.Pod) {
		if _, err := s.Update(ctx, podKey("default", p.Name), p, command.Preconditions{}); err != nil {
			t.Fatalf("update pod: %v", err)
		}
	}
	zero := int64(0)
	steps := []struct {
		name          string
		do            func()
		ready, unread []string
	}{
		{name: "no pods", do: func() {}},
		{name: "a ready pod and a pod not ready", do: func() {
			for _, p := range []*corev1.Pod{webPod("web-1", "10.1.0.1", true), webPod("web-2", "10.1.0.2", false)} {
				if _, err := s.Create(ctx, podKey("default", p.Name), p); err != nil {
					t.Fatal(err)
				}
			}
			other := newPod("default", "other").obj()
			other.Labels, other.Status.PodIP = map[string]string{"app": "db"}, "10.1.0.9"
			if _, err := s.Create(ctx, podKey("default", "other"), other); err != nil {
				t.Fatal(err)
			}
		}, ready: []string{"web-1"}, unread: []string{"web-2"}},
		{name: "the second becomes ready", do: func() { put(webPod("web-2", "10.1.0.2", true)) }, ready: []string{"web-1", "web-2"}},
		{name: "the first is deleted", do: func() {
			if _, _, err := s.Delete(ctx, podKey("default", "web-1"), DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		}, ready: []string{"web-2"}},
		{name: "the second stops matching", do: func() {
			p := webPod("web-2", "10.1.0.2", true)
			p.Labels = map[string]string{"app": "web-old"}
			put(p)
		}},
	}
	for _, step := range steps {
		step.do()
		waitFor(t, step.name, func() error {
			ready, unready, ports, err := addresses(st, "web")
			if err != nil {
				return err
			}
			if !equality.Semantic.DeepEqual(ready, step.ready) || !equality.Semantic.DeepEqual(unready, step.unread) {
				return fmt.Errorf("ready %v not ready %v, want %v and %v", ready, unready, step.ready, step.unread)
			}
			for _, p := range ports {
				if p != 8080 {
					return fmt.Errorf("port %d, want the named target port 8080", p)
				}
			}
			return nil
		})
	}
	if _, _, err := s.Delete(ctx, svcKey("default", "web"), DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "endpoints deleted with the service", func() error {
		if !gone(st, endpointsKey("default", "web")) {
			return errors.New("still there")
		}
		return nil
	})
}

func TestKubernetesService(t *testing.T) {
	ctx := context.Background()
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, ServiceOptions{})
	for _, server := range []string{"127.0.0.1:8080", "127.0.0.1:9090", "127.0.0.1:9090"} {
		ap := netip.MustParseAddrPort(server)
		if err := s.EnsureKubernetesService(ctx, ap); err != nil {
			t.Fatalf("ensure %s: %v", server, err)
		}
		it, err := st.Get(svcKey("default", "kubernetes"))
		if err != nil {
			t.Fatal(err)
		}
		svc := it.Object().(*corev1.Service)
		if svc.Spec.ClusterIP != "10.254.0.1" || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.IntValue() != int(ap.Port()) {
			t.Fatalf("kubernetes service %s %+v", svc.Spec.ClusterIP, svc.Spec.Ports)
		}
		it, err = st.Get(endpointsKey("default", "kubernetes"))
		if err != nil {
			t.Fatal(err)
		}
		ss := it.Object().(*corev1.Endpoints).Subsets
		if len(ss) != 1 || ss[0].Addresses[0].IP != "127.0.0.1" || ss[0].Ports[0].Port != int32(ap.Port()) {
			t.Fatalf("kubernetes endpoints %+v", ss)
		}
	}
	// Its IP is held: nobody else gets it.
	if _, err := createSvc(s, newSvc("x").ip("10.254.0.1").obj()); invalidField(err) != "spec.clusterIP" {
		t.Fatalf("err = %v, want the kubernetes IP taken", err)
	}
}

func endpointsKey(ns, name string) persistence.Key {
	return persistence.Key{Resource: "endpoints", Namespace: ns, Name: name}
}
