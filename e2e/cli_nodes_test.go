package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// podNodes maps each pod of the web rc to its node ("" while unscheduled).
func podNodes(t *testing.T, s *Server) map[string]string {
	t.Helper()
	out := s.MustKubectl(t, "", "get", "pods", "-l", "run=web", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}`)
	m := map[string]string{}
	for _, l := range strings.Fields(out) {
		name, node, _ := strings.Cut(l, "=")
		m[name] = node
	}
	return m
}

// onNode is the sorted names of the pods on node.
func onNode(pods map[string]string, node string) []string {
	var out []string
	for p, n := range pods {
		if n == node {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// mustKubeactor runs kubeactor and fails unless it succeeds and its stdout is want
// (or ends with it, when suffix).
func mustKubeactor(t *testing.T, s *Server, want string, suffix bool, args ...string) string {
	t.Helper()
	r := s.Kubeactor(t, "", args...)
	ok := r.Stdout == want || (suffix && strings.HasSuffix(r.Stdout, want))
	if r.Err != nil || !ok {
		t.Fatalf("kubeactor %s: %v\nstdout %q (want %q)\nstderr %q", strings.Join(args, " "), r.Err, r.Stdout, want, r.Stderr)
	}
	return r.Stdout
}

func TestCLINodesAndWorkloads(t *testing.T) {
	s := StartServer(t, "")
	startAgent(t, s, "--simulate", "2", "--node-status-update-frequency", "1s")
	Eventually(t, 30*time.Second, "both nodes are ready", func() error {
		out := s.MustKubectl(t, "", "get", "nodes", "--no-headers")
		if strings.Count(out, " Ready ") != 2 {
			return fmt.Errorf("nodes:\n%s", out)
		}
		return nil
	})

	mustKubeactor(t, s, "replicationcontroller/web created\n", false, "run", "web", "--image=nginx:1.7.9", "--replicas=2")
	Eventually(t, 30*time.Second, "two web pods are scheduled", func() error {
		pods := podNodes(t, s)
		if len(pods) != 2 || len(onNode(pods, "")) != 0 {
			return fmt.Errorf("pods: %v", pods)
		}
		return nil
	})

	mustKubeactor(t, s, "service/web exposed\n", false, "expose", "rc", "web", "--port=80", "--type=NodePort")
	svc := s.MustKubectl(t, "", "get", "service", "web", "-o", "jsonpath={.spec.selector.run} {.spec.type} {.spec.ports[0].port} {.spec.ports[0].nodePort}")
	var sel, typ string
	var port, nodePort int
	if _, err := fmt.Sscan(svc, &sel, &typ, &port, &nodePort); err != nil || sel != "web" || typ != "NodePort" || port != 80 || nodePort == 0 {
		t.Fatalf("service web: %q (%v), want selector run=web, NodePort, port 80 and a node port", svc, err)
	}

	mustKubeactor(t, s, "node/sim-0 cordoned\n", false, "cordon", "sim-0")
	mustKubeactor(t, s, "node/sim-0 already cordoned\n", false, "cordon", "sim-0")
	if out := s.MustKubectl(t, "", "get", "node", "sim-0", "--no-headers"); !strings.Contains(out, "SchedulingDisabled") {
		t.Fatalf("sim-0 is not shown SchedulingDisabled:\n%s", out)
	}
	before := onNode(podNodes(t, s), "sim-0")
	mustKubeactor(t, s, "replicationcontroller/web scaled\n", false, "scale", "rc", "web", "--replicas=4")
	Eventually(t, 30*time.Second, "the new pods are scheduled on sim-1", func() error {
		pods := podNodes(t, s)
		if len(pods) != 4 || len(onNode(pods, "")) != 0 {
			return fmt.Errorf("pods: %v", pods)
		}
		if got := onNode(pods, "sim-0"); strings.Join(got, ",") != strings.Join(before, ",") {
			return fmt.Errorf("pods on the cordoned sim-0: %v, were %v", got, before)
		}
		return nil
	})

	mustKubeactor(t, s, "node/sim-1 drained\n", true, "drain", "sim-1", "--force", "--grace-period=0", "--timeout=60s")
	if pods := onNode(podNodes(t, s), "sim-1"); len(pods) != 0 {
		t.Fatalf("pods still on the drained sim-1: %v", pods)
	}
	if out := s.MustKubectl(t, "", "get", "node", "sim-1", "--no-headers"); !strings.Contains(out, "SchedulingDisabled") {
		t.Fatalf("the drained sim-1 is not cordoned:\n%s", out)
	}

	mustKubeactor(t, s, "node/sim-0 uncordoned\n", false, "uncordon", "sim-0")
	var one string
	Eventually(t, 60*time.Second, "the pods land on the uncordoned sim-0", func() error {
		pods := podNodes(t, s)
		on := onNode(pods, "sim-0")
		if len(pods) != 4 || len(on) != 4 {
			return fmt.Errorf("pods: %v", pods)
		}
		for _, p := range on { // one of the pods that waited while both nodes were cordoned
			if !slices.Contains(before, p) {
				one = p
			}
		}
		return nil
	})

	Eventually(t, 30*time.Second, "describe shows the pod, its node and its events", func() error {
		out := mustKubeactor(t, s, "", true, "describe", "pod", one)
		for _, want := range []string{"Name:", one, "sim-0", "Events:", "FailedScheduling", "were unschedulable"} {
			if !strings.Contains(out, want) {
				return fmt.Errorf("no %q in:\n%s", want, out)
			}
		}
		return nil
	})
}
