package actors

import (
	"context"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func cidrNodeOptions(allocate bool) NodeOptions {
	o := testNodeOptions()
	o.PodCIDRs = PodCIDROptions{Allocate: allocate, ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), MaskSize: 24}
	return o
}

func withCIDR(n *corev1.Node, cidr string) *corev1.Node {
	n.Spec.PodCIDR = cidr
	return n
}

// podCIDRs returns each named node's stored spec.podCIDR.
func podCIDRs(t *testing.T, s *System, names []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range names {
		if it, err := s.env.store.Get(nodeKey(name)); err == nil {
			out[name] = it.Object().(*corev1.Node).Spec.PodCIDR
		}
	}
	return out
}

// heldCIDRs asks the nodes manager what each node holds.
func heldCIDRs(t *testing.T, s *System) map[string]netip.Prefix {
	t.Helper()
	res, err := s.env.root.RequestFuture(s.env.managers["nodes"], &podCIDRsQuery{}, 5*time.Second).Result()
	if err != nil {
		t.Fatalf("ask the nodes manager: %v", err)
	}
	return res.(map[string]netip.Prefix)
}

func TestNodePodCIDRAllocation(t *testing.T) {
	type step struct {
		op   string // create, delete
		node string
		cidr string // create: the node's own podCIDR
	}
	tests := []struct {
		name  string
		steps []step
		want  map[string]string
	}{
		{"created nodes get the lowest free /24", []step{
			{op: "create", node: "a"}, {op: "create", node: "b"}, {op: "create", node: "c"},
		}, map[string]string{"a": "10.244.0.0/24", "b": "10.244.1.0/24", "c": "10.244.2.0/24"}},
		{"a node keeps its own podCIDR, which is marked used", []step{
			{op: "create", node: "a", cidr: "10.244.0.0/24"},
			{op: "create", node: "sim-0", cidr: "10.100.0.0/24"},
			{op: "create", node: "b"},
		}, map[string]string{"a": "10.244.0.0/24", "sim-0": "10.100.0.0/24", "b": "10.244.1.0/24"}},
		{"a deleted node's CIDR is given again", []step{
			{op: "create", node: "a"}, {op: "create", node: "b"},
			{op: "delete", node: "a"},
			{op: "create", node: "c"},
		}, map[string]string{"b": "10.244.1.0/24", "c": "10.244.0.0/24"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			st := openControllerStore(t)
			s := startControllers(t, st, clock, cidrNodeOptions(true), ServiceOptions{})
			ctx := context.Background()
			var names []string
			for _, sp := range tt.steps {
				switch sp.op {
				case "create":
					names = append(names, sp.node)
					if _, err := s.Create(ctx, nodeKey(sp.node), withCIDR(newNode(sp.node, clock.Now(), nil), sp.cidr)); err != nil {
						t.Fatalf("create %s: %v", sp.node, err)
					}
				case "delete":
					if _, _, err := s.Delete(ctx, nodeKey(sp.node), DeleteOptions{}); err != nil {
						t.Fatalf("delete %s: %v", sp.node, err)
					}
					// The CIDR is released once the node's actor is gone.
					eventually(t, 10*time.Second, "pod CIDR released", func() bool {
						_, held := heldCIDRs(t, s)[sp.node]
						return !held
					})
				}
			}
			got := podCIDRs(t, s, names)
			if len(got) != len(tt.want) {
				t.Fatalf("pod CIDRs %v, want %v", got, tt.want)
			}
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("node %s podCIDR %q, want %q (all: %v)", name, got[name], want, got)
				}
			}
		})
	}
}

// TestNodePodCIDRRestart: the allocator is restored from the stored nodes (nothing is
// handed out twice), and a node stored without a podCIDR is given one by its actor.
func TestNodePodCIDRRestart(t *testing.T) {
	clock := newFakeClock()
	st := openControllerStore(t)
	ctx := context.Background()
	start := func(allocate bool) *System {
		s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, Clock: clock,
			Nodes: cidrNodeOptions(allocate), Resources: append(append([]string(nil), testResources...), "endpoints"), SyncPacing: -1})
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		t.Cleanup(s.Stop)
		return s
	}
	create := func(s *System, name string) {
		t.Helper()
		if _, err := s.Create(ctx, nodeKey(name), newNode(name, clock.Now(), nil)); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}

	s := start(true)
	create(s, "a")
	create(s, "b")
	s.Stop()
	s = start(false)
	create(s, "old") // stored without a podCIDR
	s.Stop()

	s = start(true)
	eventually(t, 10*time.Second, "node old given a pod CIDR", func() bool {
		return podCIDRs(t, s, []string{"old"})["old"] != ""
	})
	create(s, "c")
	got := podCIDRs(t, s, []string{"a", "b", "c", "old"})
	want := map[string]string{"a": "10.244.0.0/24", "b": "10.244.1.0/24", "old": "10.244.2.0/24", "c": "10.244.3.0/24"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("node %s podCIDR %q, want %q (all: %v)", name, got[name], w, got)
		}
	}
}
