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

// traceRC is a replication controller of one testserver pod with a readiness probe.
const traceRC = `apiVersion: v1
kind: ReplicationController
metadata: {name: traced}
spec:
  replicas: 1
  selector: {app: traced}
  template:
    metadata:
      labels: {app: traced}
    spec:
      containers:
      - name: web
        image: kubeactor/testserver:latest
        imagePullPolicy: IfNotPresent
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
          periodSeconds: 1
`

// TestTraceAcrossNode: an RC created with kubectl runs its pod on a Docker node;
// `kubeactor trace pod/NAME -o json` shows one trace from the API request through
// the RC's sync, the scheduling round and the binding to the node agent's pod sync
// (the agent continued the binding's trace) and its container create and start,
// each span below the one before it and starting no earlier; the agent's spans
// name the node, and the readiness probe's transition is in the pod's history.
func TestTraceAcrossNode(t *testing.T) {
	n := startDockerNode(t, "--tracing", "--trace-sampling", "1")
	n.create(traceRC)
	var pod string
	Eventually(t, 60*time.Second, "a pod of traced running and ready", func() error {
		r := n.s.Kubectl("", "get", "pods", "-l", "app=traced", "-o", "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}")
		name := strings.TrimSpace(r.Stdout)
		if r.Err != nil || name == "" || strings.Contains(name, "\n") {
			return fmt.Errorf("pods: %q %v %s", r.Stdout, r.Err, r.Stderr)
		}
		p, err := n.pod(name)
		if err != nil {
			return err
		}
		if err := ready(p); err != nil {
			return err
		}
		pod = name
		return nil
	})

	chain := []string{"POST /api/v1/namespaces/:namespace/replicationcontrollers", "replicationcontrollers create",
		"replicationcontrollers sync", "pods create", "scheduler round", "pods binding", "pod sync", "container create"}
	var h gateway.TraceHistory
	var out string
	Eventually(t, 30*time.Second, "the pod's story across server and node", func() error {
		r := n.s.Kubeactor(t, "", "trace", "pod/"+pod, "-o", "json")
		if r.Err != nil {
			return fmt.Errorf("%v: %s", r.Err, r.Stderr)
		}
		out = r.Stdout
		h = gateway.TraceHistory{}
		if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil {
			return err
		}
		var errs []string
		for _, tr := range h.Traces {
			err := causal(tr.Roots, chain)
			if err == nil {
				err = agentSync(tr.Roots, n.name)
			}
			if err == nil {
				err = probed(h.Traces)
			}
			if err == nil {
				return nil
			}
			errs = append(errs, tr.TraceID+": "+err.Error())
		}
		return fmt.Errorf("no trace with %v: %v", chain, errs)
	})
	t.Logf("kubeactor trace pod/%s -o json: %d traces, %d bytes", pod, len(h.Traces), len(out))
	r := n.s.Kubeactor(t, "", "trace", "pod/"+pod)
	for _, w := range append(chain, "container start", "k8s.node="+n.name) {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("trace output lacks %q:\n%s", w, r.Stdout)
		}
	}
	t.Logf("kubeactor trace pod/%s:\n%s", pod, r.Stdout)
}

// agentSync checks the agent's pod sync below the binding: it names the node, and
// it holds a container create and, after it, a container start of the same container.
func agentSync(roots []*tracing.Node, node string) error {
	b := find(roots, "pods binding")
	for _, s := range b.Children {
		if s.Name != "pod sync" {
			continue
		}
		if s.Attributes["k8s.node"] != node {
			return fmt.Errorf("pod sync below the binding has node %q, want %q", s.Attributes["k8s.node"], node)
		}
		created := map[string]*tracing.Node{} // by container id
		for _, c := range s.Children {
			if c.Name == "container create" && c.Attributes["container.id"] != "" {
				created[c.Attributes["container.id"]] = c
			}
		}
		for _, c := range s.Children {
			if c.Name != "container start" {
				continue
			}
			cr, ok := created[c.Attributes["container.id"]]
			if !ok {
				continue
			}
			if c.StartOffset < cr.StartOffset+cr.Duration {
				return fmt.Errorf("container %s started before its create ended", c.Attributes["container.id"])
			}
			if strings.HasPrefix(cr.Attributes["container.name"], "k8s_web.") {
				return nil
			}
		}
		return fmt.Errorf("no create then start of container web below the pod sync (%d children)", len(s.Children))
	}
	return fmt.Errorf("no pod sync below the binding")
}

// probed checks that the pod's history holds the readiness probe's transition to
// success, below a pod sync.
func probed(traces []tracing.Trace) error {
	var below func(ns []*tracing.Node, inSync bool) bool
	below = func(ns []*tracing.Node, inSync bool) bool {
		for _, n := range ns {
			if inSync && n.Name == "probe transition" && n.Attributes["probe"] == "Readiness" && n.Attributes["result"] == "true" {
				return true
			}
			if below(n.Children, inSync || n.Name == "pod sync") {
				return true
			}
		}
		return false
	}
	for _, tr := range traces {
		if below(tr.Roots, false) {
			return nil
		}
	}
	return fmt.Errorf("no readiness probe transition below a pod sync")
}
