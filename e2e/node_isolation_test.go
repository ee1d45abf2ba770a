package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// unscheduleNode is the book's unschedule_node.yaml (ch3-5 §5.1) for a node name.
func unscheduleNode(name string, unschedulable bool) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %s
  labels:
    kubernetes.io/hostname: %s
spec:
  unschedulable: %t
`, name, name, unschedulable)
}

// TestNodeIsolationWithReplace is the book's node isolation walkthrough: kubectl
// replace with a file that has no pod CIDR marks the node SchedulingDisabled and
// keeps its allocated CIDR, new pods avoid it, and replacing it back ends it.
func TestNodeIsolationWithReplace(t *testing.T) {
	s := StartServer(t, "")
	startAgent(t, s, "--simulate", "2", "--name-prefix", "kubernetes-minion", "--node-status-update-frequency", "1s")
	const isolated, other = "kubernetes-minion-0", "kubernetes-minion-1"
	cs := clientset(t, s)
	var cidr string
	Eventually(t, 30*time.Second, "2 Ready nodes with pod CIDRs", func() error {
		out := s.MustKubectl(t, "", "get", "nodes", "--no-headers")
		if n := strings.Count(out, " Ready "); n != 2 {
			return fmt.Errorf("nodes:\n%s", out)
		}
		n, err := cs.CoreV1().Nodes().Get(context.Background(), isolated, metav1.GetOptions{})
		if err != nil || n.Spec.PodCIDR == "" {
			return fmt.Errorf("node %s: podCIDR %q, %v", isolated, n.Spec.PodCIDR, err)
		}
		cidr = n.Spec.PodCIDR
		return nil
	})

	if out := s.MustKubectl(t, unscheduleNode(isolated, true), "replace", "-f", "-"); !strings.Contains(out, isolated) {
		t.Fatalf("replace printed %q", out)
	}
	if out := s.MustKubectl(t, "", "get", "nodes", isolated, "--no-headers"); !strings.Contains(out, "Ready,SchedulingDisabled") {
		t.Fatalf("get nodes after replace:\n%s", out)
	}
	n, err := cs.CoreV1().Nodes().Get(context.Background(), isolated, metav1.GetOptions{})
	if err != nil || n.Spec.PodCIDR != cidr || !n.Spec.Unschedulable {
		t.Fatalf("node after replace: podCIDR %q (want %q), unschedulable %v, %v", n.Spec.PodCIDR, cidr, n.Spec.Unschedulable, err)
	}

	s.MustKubectl(t, strings.Replace(mustRead(t, guestbook("frontend-controller.yaml")), "replicas: 3", "replicas: 4", 1), "create", "-f", "-")
	Eventually(t, 30*time.Second, "4 pods bound, none on the isolated node", func() error {
		nodes := nodesOf(t, s, "name=frontend")
		if len(nodes) != 4 {
			return fmt.Errorf("pods: %v", nodes)
		}
		for pod, node := range nodes {
			if node != other {
				return fmt.Errorf("pod %s on %q", pod, node)
			}
		}
		return nil
	})

	s.MustKubectl(t, unscheduleNode(isolated, false), "replace", "-f", "-")
	out := s.MustKubectl(t, "", "get", "nodes", isolated, "--no-headers")
	if !strings.Contains(out, " Ready ") || strings.Contains(out, "SchedulingDisabled") {
		t.Fatalf("get nodes after recovery:\n%s", out)
	}
}
