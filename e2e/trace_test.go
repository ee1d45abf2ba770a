package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/tracing"
)

// TestTraceAndExplain: `kubeactor run` makes an RC of 2 replicas, scheduled on a
// simulated node; `kubeactor trace pod/NAME` shows one trace holding the request,
// the RC's create and sync, the pod's create, the scheduling round and the binding,
// in causal order; `kubeactor explain` says where the pod went and why, and what the
// RC's syncs decided.
func TestTraceAndExplain(t *testing.T) {
	s := StartServer(t, "")
	startAgent(t, s, "--simulate", "1", "--name-prefix", "tr", "--node-status-update-frequency", "1s")
	Eventually(t, 30*time.Second, "node tr-0 registered", func() error {
		return s.Kubectl("", "get", "node", "tr-0").Err
	})
	if r := s.Kubeactor(t, "", "run", "web", "--image=nginx", "--replicas=2"); r.Err != nil {
		t.Fatalf("run: %v %s", r.Err, r.Stderr)
	}
	var pod string
	Eventually(t, 30*time.Second, "a pod of web bound", func() error {
		r := s.Kubectl("", "get", "pods", "-l", "run=web", "-o", "jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}")
		for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[1] == "tr-0" {
				pod = f[0]
				return nil
			}
		}
		return fmt.Errorf("pods: %q %v %s", r.Stdout, r.Err, r.Stderr)
	})

	want := []string{"POST /api/v1/namespaces/:namespace/replicationcontrollers", "replicationcontrollers create",
		"replicationcontrollers sync", "pods create", "scheduler round", "pods binding"}
	var text string
	Eventually(t, 30*time.Second, "the pod's story", func() error {
		r := s.Kubeactor(t, "", "trace", "pod/"+pod, "-o", "json")
		if r.Err != nil {
			return fmt.Errorf("%v: %s", r.Err, r.Stderr)
		}
		var h gateway.TraceHistory
		if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil {
			return err
		}
		for _, tr := range h.Traces {
			if err := causal(tr.Roots, want); err == nil {
				return nil
			}
		}
		return fmt.Errorf("no trace with %v in %s", want, r.Stdout)
	})
	r := s.Kubeactor(t, "", "trace", "pod/"+pod)
	text = r.Stdout
	for _, w := range append(want, "START", "DURATION", "node=tr-0", "result=bound") {
		if !strings.Contains(text, w) {
			t.Errorf("trace output lacks %q:\n%s", w, text)
		}
	}
	t.Logf("kubeactor trace pod/%s:\n%s", pod, text)

	x := s.Kubeactor(t, "", "explain", "pod/"+pod)
	if x.Err != nil || !strings.Contains(x.Stdout, "node: tr-0") || !strings.Contains(x.Stdout, "scheduled on tr-0 with score") {
		t.Errorf("explain pod: %v %s %s", x.Err, x.Stdout, x.Stderr)
	}
	t.Logf("kubeactor explain pod/%s:\n%s", pod, x.Stdout)
	x = s.Kubeactor(t, "", "explain", "rc", "web")
	if x.Err != nil || !strings.Contains(x.Stdout, "desired 2 replicas") || !strings.Contains(x.Stdout, "2 creates") {
		t.Errorf("explain rc: %v %s %s", x.Err, x.Stdout, x.Stderr)
	}
	t.Logf("kubeactor explain rc/web:\n%s", x.Stdout)
	if x := s.Kubeactor(t, "", "trace", "pod/nothere"); x.Err != nil || !strings.Contains(x.Stdout, "no spans kept") {
		t.Errorf("trace of an unknown pod: %v %q %s", x.Err, x.Stdout, x.Stderr)
	}
}

// causal checks that the spans named want are found in that order, each below the
// previous one, starting no earlier.
func causal(roots []*tracing.Node, want []string) error {
	level := roots
	var prev *tracing.Node
	for _, name := range want {
		n := find(level, name)
		if n == nil {
			return fmt.Errorf("no %q", name)
		}
		if prev != nil && n.StartOffset < prev.StartOffset {
			return fmt.Errorf("%q starts before %q", name, prev.Name)
		}
		prev, level = n, n.Children
	}
	return nil
}

func find(ns []*tracing.Node, name string) *tracing.Node {
	for _, n := range ns {
		if n.Name == name {
			return n
		}
	}
	for _, n := range ns {
		if f := find(n.Children, name); f != nil {
			return f
		}
	}
	return nil
}
