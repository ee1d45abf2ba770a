package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/gateway"
)

// TestExplainScheduling: `kubeactor explain pod/NAME` evaluates the pod against every
// node with the scheduler's predicates and priorities: a pod whose nodeSelector no
// node matches is shown refused by MatchNodeSelector on each node, and a bound pod
// shows the node it was bound to, from its decision record, among the nodes scored
// now. `explain node/NAME` says the node is Ready and evicts nothing.
func TestExplainScheduling(t *testing.T) {
	s := StartServer(t, "")
	startAgent(t, s, "--simulate", "2", "--name-prefix", "ex", "--node-status-update-frequency", "1s")
	Eventually(t, 30*time.Second, "both nodes are ready", func() error {
		out := s.MustKubectl(t, "", "get", "nodes", "--no-headers")
		if strings.Count(out, " Ready ") != 2 {
			return fmt.Errorf("nodes:\n%s", out)
		}
		return nil
	})
	pod := func(name, selector string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":{` + selector +
			`"containers":[{"name":"c","image":"nginx"}]}}`
	}
	s.MustKubectl(t, pod("nowhere", `"nodeSelector":{"disk":"none"},`), "create", "-f", "-")
	s.MustKubectl(t, pod("somewhere", ""), "create", "-f", "-")

	var node string
	Eventually(t, 30*time.Second, "pod somewhere bound", func() error {
		r := s.Kubectl("", "get", "pod", "somewhere", "-o", "jsonpath={.spec.nodeName}")
		if node = strings.TrimSpace(r.Stdout); node == "" {
			return fmt.Errorf("not bound: %q %v %s", r.Stdout, r.Err, r.Stderr)
		}
		return nil
	})

	explain := func(object string, json bool) string {
		args := []string{"explain", object}
		if json {
			args = append(args, "-o", "json")
		}
		r := s.Kubeactor(t, "", args...)
		if r.Err != nil {
			t.Fatalf("explain %s: %v %s", object, r.Err, r.Stderr)
		}
		return r.Stdout
	}
	var x gateway.Explanation
	if err := json.Unmarshal([]byte(explain("pod/nowhere", true)), &x); err != nil {
		t.Fatal(err)
	}
	if ev := x.Evaluation; ev == nil || len(ev.Nodes) != 2 || ev.Winner != "" ||
		ev.Nodes[0].Predicate != "MatchNodeSelector" || ev.Nodes[1].Predicate != "MatchNodeSelector" {
		t.Errorf("pod nowhere evaluated %+v", x.Evaluation)
	}
	text := explain("pod/nowhere", false)
	for _, want := range []string{"not scheduled yet", "pending now because: 0/2 nodes are available: 2 node(s) didn't match node selector.",
		"node ex-0: refused by MatchNodeSelector: node(s) didn't match node selector",
		"node ex-1: refused by MatchNodeSelector: node(s) didn't match node selector"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain pod/nowhere lacks %q:\n%s", want, text)
		}
	}
	t.Logf("kubeactor explain pod/nowhere:\n%s", text)

	x = gateway.Explanation{}
	if err := json.Unmarshal([]byte(explain("pod/somewhere", true)), &x); err != nil {
		t.Fatal(err)
	}
	if x.Scheduling == nil || x.Scheduling.Node != node || x.Evaluation == nil || len(x.Evaluation.Nodes) != 2 {
		t.Errorf("pod somewhere: record %+v, evaluation %+v, bound to %s", x.Scheduling, x.Evaluation, node)
	}
	text = explain("pod/somewhere", false)
	for _, want := range []string{"node: " + node, "scheduled on " + node + " with score", "node " + node + ": fits, score", "<- bound here"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain pod/somewhere lacks %q:\n%s", want, text)
		}
	}
	t.Logf("kubeactor explain pod/somewhere:\n%s", text)

	text = explain("node/"+node, false)
	for _, want := range []string{"ready: True", "nothing is evicted", "1 pod(s) bound here", "pod default/somewhere"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain node/%s lacks %q:\n%s", node, want, text)
		}
	}
	t.Logf("kubeactor explain node/%s:\n%s", node, text)
}
