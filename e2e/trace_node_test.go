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
// With the agent's tracing off the server's story stops at the binding: the agent
// makes no span and its status writes start traces of their own.
func TestTraceAcrossNode(t *testing.T) {
	requireDocker(t)
	server := []string{"POST /api/v1/namespaces/:namespace/replicationcontrollers", "replicationcontrollers create",
		"replicationcontrollers sync", "pods create", "scheduler round", "pods binding"}
	tests := []struct {
		name  string
		flags []string
		check func(h gateway.TraceHistory, node string) error
		text  []string // in the text output too
		// explain is in `kubeactor explain pod/NAME`: the node agent's last sync.
		explain string
	}{
		{
			name:  "agent tracing on",
			flags: []string{"--tracing", "--trace-sampling", "1", "--read-only-port", "0", "--healthz-port", "0"},
			check: func(h gateway.TraceHistory, node string) error {
				var errs []string
				for _, tr := range h.Traces {
					err := causal(tr.Roots, append(server, "pod sync", "container create"))
					if err == nil {
						err = agentSync(tr.Roots, node)
					}
					if err == nil {
						err = probed(h.Traces)
					}
					if err == nil {
						return nil
					}
					errs = append(errs, tr.TraceID+": "+err.Error())
				}
				return fmt.Errorf("no trace from the request to the container's start: %v", errs)
			},
			text:    []string{"pod sync", "container create", "container start", "probe transition", "k8s.node="},
			explain: "last sync by the node agent of ",
		},
		{
			name:  "agent tracing off",
			flags: []string{"--tracing=false", "--read-only-port", "0", "--healthz-port", "0"},
			check: func(h gateway.TraceHistory, node string) error {
				bound, ownStatus := false, false
				for _, tr := range h.Traces {
					if n := find(tr.Roots, "pod sync"); n != nil {
						return fmt.Errorf("trace %s has an agent span %+v", tr.TraceID, n)
					}
					if causal(tr.Roots, server) == nil {
						bound = true
					}
					for _, r := range tr.Roots {
						if strings.HasPrefix(r.Name, "PUT /api/v1/namespaces/:namespace/pods/:name/status") && r.ParentID == "" {
							ownStatus = true
						}
					}
				}
				if !bound || !ownStatus {
					return fmt.Errorf("want the server's story to the binding (%v) and the agent's status write as a trace of its own (%v)", bound, ownStatus)
				}
				return nil
			},
			text:    []string{"pods binding"},
			explain: "no sync by the node agent of ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := startDockerNode(t, tc.flags...)
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
			Eventually(t, 30*time.Second, "the pod's story", func() error {
				r := n.s.Kubeactor(t, "", "trace", "pod/"+pod, "-o", "json")
				if r.Err != nil {
					return fmt.Errorf("%v: %s", r.Err, r.Stderr)
				}
				var h gateway.TraceHistory
				if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil {
					return err
				}
				return tc.check(h, n.name)
			})
			r := n.s.Kubeactor(t, "", "trace", "pod/"+pod)
			for _, w := range append(server, tc.text...) {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("trace output lacks %q:\n%s", w, r.Stdout)
				}
			}
			t.Logf("kubeactor trace pod/%s:\n%s", pod, r.Stdout)
			x := n.s.Kubeactor(t, "", "explain", "pod/"+pod)
			if want := tc.explain + n.name; x.Err != nil || !strings.Contains(x.Stdout, want) {
				t.Errorf("explain pod/%s lacks %q (%v %s):\n%s", pod, want, x.Err, x.Stderr, x.Stdout)
			}
			t.Logf("kubeactor explain pod/%s:\n%s", pod, x.Stdout)
		})
	}
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
