package actors

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// lbIngress is the stored service's ingress ips.
func lbIngress(t testing.TB, s *System, name string) []string {
	t.Helper()
	it, err := s.env.store.Get(svcKey("default", name))
	if err != nil {
		t.Fatalf("get service %s: %v", name, err)
	}
	var ips []string
	for _, in := range it.Object().(*corev1.Service).Status.LoadBalancer.Ingress {
		ips = append(ips, in.IP)
	}
	return ips
}

// addressedNode is a Ready node at ip whose service proxy runs.
func addressedNode(name, ip string, now time.Time) *corev1.Node {
	n := newNode(name, now, &now)
	n.Annotations = map[string]string{kinds.ServiceProxyAnnotation: "iptables"}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}
	return n
}

// TestLoadBalancerIngressFollowsNodes: a LoadBalancer service's ingress is the
// addresses of the Ready nodes whose service proxy runs, and follows them as nodes
// come, stop being Ready, lose or regain their proxy and go; a NodePort service gets
// none, and loses it when it stops being a LoadBalancer.
func TestLoadBalancerIngressFollowsNodes(t *testing.T) {
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
	ctx := context.Background()
	now := time.Now()
	for _, n := range []*corev1.Node{addressedNode("n1", "192.0.2.11", now), addressedNode("n2", "192.0.2.2", now)} {
		if _, err := s.Create(ctx, nodeKey(n.Name), n); err != nil {
			t.Fatalf("create node %s: %v", n.Name, err)
		}
	}
	lb := newSvc("lb").selector("app", "web").obj()
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	created, err := createSvc(s, lb)
	if err != nil {
		t.Fatalf("create service: %v", err)
	}
	if created.Spec.Ports[0].NodePort == 0 {
		t.Errorf("the LoadBalancer service got no node port: %+v", created.Spec.Ports)
	}
	if _, err := createSvc(s, newSvc("np").nodePort(0).obj()); err != nil {
		t.Fatalf("create NodePort service: %v", err)
	}
	want := func(what string, ips ...string) {
		t.Helper()
		eventually(t, 10*time.Second, what, func() bool { return slices.Equal(lbIngress(t, s, "lb"), ips) })
	}
	want("both nodes, sorted by address", "192.0.2.2", "192.0.2.11")

	// n2 stops being Ready: only n1 serves.
	n2 := getNode(t, st, "n2").DeepCopy()
	n2.Status.Conditions[0].Status = corev1.ConditionFalse
	if _, err := s.Update(ctx, nodeKey("n2"), n2, command.Preconditions{}); err != nil {
		t.Fatalf("update n2: %v", err)
	}
	want("n2 not Ready: n1 only", "192.0.2.11")
	heartbeat(t, s, st, "n2", time.Now())
	want("n2 Ready again", "192.0.2.2", "192.0.2.11")

	// n2's proxy stops (its mark is taken away), then starts again.
	setProxy := func(mode string) {
		t.Helper()
		n := getNode(t, st, "n2").DeepCopy()
		n.Annotations = map[string]string{}
		if mode != "" {
			n.Annotations[kinds.ServiceProxyAnnotation] = mode
		}
		if _, err := s.Update(ctx, nodeKey("n2"), n, command.Preconditions{}); err != nil {
			t.Fatalf("update n2: %v", err)
		}
	}
	setProxy("")
	want("n2 runs no proxy: n1 only", "192.0.2.11")
	setProxy("userspace")
	want("n2's proxy back", "192.0.2.2", "192.0.2.11")

	// n2 goes: n1 only; a third node comes.
	if _, _, err := s.Delete(ctx, nodeKey("n2"), DeleteOptions{}); err != nil {
		t.Fatalf("delete n2: %v", err)
	}
	want("n2 deleted: n1 only", "192.0.2.11")
	if _, err := s.Create(ctx, nodeKey("n3"), addressedNode("n3", "192.0.2.3", time.Now())); err != nil {
		t.Fatalf("create n3: %v", err)
	}
	want("n3 added", "192.0.2.3", "192.0.2.11")
	if got := lbIngress(t, s, "np"); len(got) != 0 {
		t.Errorf("the NodePort service has ingress %v", got)
	}

	// The service becomes a NodePort service: its ingress goes.
	it, err := st.Get(svcKey("default", "lb"))
	if err != nil {
		t.Fatal(err)
	}
	np := it.Object().(*corev1.Service).DeepCopy()
	np.Spec.Type = corev1.ServiceTypeNodePort
	if _, err := s.Update(ctx, svcKey("default", "lb"), np, command.Preconditions{}); err != nil {
		t.Fatalf("update to NodePort: %v", err)
	}
	want("a NodePort service has none")
}
