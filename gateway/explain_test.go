package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/scheduler"
	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// explainNow is the explain tests' clock.
var explainNow = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

// explainServer is a gateway without a control plane (reads need none) over a real
// in-memory store holding objs, with the given scheduler policy.
func explainServer(t *testing.T, policy []byte, objs ...runtime.Object) *httptest.Server {
	t.Helper()
	return tracedExplainServer(t, nil, policy, objs...)
}

// tracedExplainServer is explainServer with a tracer (whose store the test fills).
func tracedExplainServer(t *testing.T, tr *tracing.Tracer, policy []byte, objs ...runtime.Object) *httptest.Server {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	store, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	var cmds []persistence.Command
	for _, o := range objs {
		meta := o.(metav1.Object)
		meta.SetUID(types.UID(meta.GetName()))
		res := map[string]string{"*v1.Node": "nodes", "*v1.Pod": "pods", "*v1.Service": "services",
			"*v1.ReplicationController": "replicationcontrollers"}[fmt.Sprintf("%T", o)]
		cmds = append(cmds, persistence.Command{Op: persistence.OpCreate, Object: o,
			Key: persistence.Key{Resource: res, Namespace: meta.GetNamespace(), Name: meta.GetName()}})
	}
	if len(cmds) > 0 {
		if _, _, err := store.Apply(context.Background(), cmds...); err != nil {
			t.Fatalf("store: %v", err)
		}
	}
	srv, err := New(Config{Store: store, Log: log, OpenAPI: http.NotFoundHandler(), Now: func() time.Time { return explainNow },
		SchedulerPolicy: policy, NodeMonitoring: node.Config{PodEvictionTimeout: 5 * time.Minute}, Tracer: tr})
	if err != nil {
		t.Fatalf("new gateway: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs
}

func getExplanation(t *testing.T, hs *httptest.Server, path string) Explanation {
	t.Helper()
	code, body, _ := send(t, http.MethodGet, hs.URL+ExplainPath+path, "")
	var x Explanation
	if code != http.StatusOK || json.Unmarshal([]byte(body), &x) != nil {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return x
}

// onNode binds a pod; withDecision also gives it the scheduler's record.
func onNode(p *corev1.Pod, n string, withDecision bool) *corev1.Pod {
	p.Namespace = "default"
	p.Spec.NodeName = n
	if withDecision {
		p.Annotations = map[string]string{scheduler.DecisionAnnotation: scheduler.EncodeDecision(
			scheduler.Decision{Node: n, Score: 29.5, Feasible: 2, Nodes: 2}, nil)}
	}
	return p
}

func pending(p *corev1.Pod) *corev1.Pod { p.Namespace = "default"; return p }

// TestExplainPodEvaluation: explain evaluates a pod against the stored nodes and
// pods with the server's policy, node by node, and bounds its lines.
func TestExplainPodEvaluation(t *testing.T) {
	many := []runtime.Object{pending(st.NewPod("p").Obj())}
	for i := range 25 {
		many = append(many, st.NewNode(fmt.Sprintf("n%02d", i)).Obj())
	}
	tests := []struct {
		name    string
		policy  []byte
		objs    []runtime.Object
		pod     string
		refused map[string]string // node -> predicate
		winner  string
		nodes   int      // verdicts in the evaluation; -1: no evaluation
		lines   []string // substrings of the lines, in order
		absent  []string // substrings no line has
	}{
		{
			name: "pending: fits nowhere because of its nodeSelector",
			objs: []runtime.Object{
				st.NewNode("a").Obj(), st.NewNode("b").Labels("disk", "hdd").Obj(),
				st.NewNode("c").Labels("disk", "ssd").NotReady().Obj(),
				pending(st.NewPod("p").NodeSelector("disk", "ssd").Obj())},
			pod:     "p",
			refused: map[string]string{"a": "MatchNodeSelector", "b": "MatchNodeSelector", "c": scheduler.CheckNodeCondition},
			nodes:   3,
			lines: []string{"not scheduled yet", "no failed scheduling attempt recorded",
				"pending now because: 0/3 nodes are available: 2 node(s) didn't match node selector, 1 node(s) were not ready.",
				"node a: refused by MatchNodeSelector: node(s) didn't match node selector",
				"node b: refused by MatchNodeSelector", "node c: refused by CheckNodeCondition: node(s) were not ready"},
			absent: []string{"more node(s)", "<-"},
		},
		{
			name: "pending: the emptier node would be chosen",
			objs: []runtime.Object{
				st.NewNode("busy").Obj(), st.NewNode("idle").Obj(),
				onNode(st.NewPod("x").CPU("2").Mem("4Gi").Obj(), "busy", false),
				pending(st.NewPod("p").CPU("1").Obj())},
			pod:    "p",
			winner: "idle",
			nodes:  2,
			lines: []string{"2 of 2 node(s) fit now: the next scheduling round places it on idle",
				"node idle: fits, score", "LeastRequestedPriority", "<- would be chosen", "node busy: fits, score"},
		},
		{
			name: "bound: the record of the decision and the nodes now",
			objs: []runtime.Object{
				st.NewNode("n1").Obj(), st.NewNode("n2").Obj(),
				onNode(st.NewPod("x").CPU("1500m").Obj(), "n2", true),
				onNode(st.NewPod("p").CPU("3").Obj(), "n1", true)},
			pod:     "p",
			refused: map[string]string{"n2": "PodFitsResources"},
			winner:  "n1",
			nodes:   2,
			lines: []string{"node: n1", "scheduled on n1 with score 29.50: 2 of 2 nodes fit",
				"evaluated now, as if pending, against 2 node(s): 1 fit, the best now: n1",
				"node n1: fits", "<- bound here; best now", "node n2: refused by PodFitsResources: Insufficient cpu"},
		},
		{
			name:   "the server's policy file",
			policy: []byte(`{"predicates":[{"name":"racked","argument":{"labelsPresence":{"labels":["rack"],"presence":true}}}],"priorities":[{"name":"EqualPriority","weight":3}]}`),
			objs: []runtime.Object{
				st.NewNode("bare").Obj(), st.NewNode("racked").Labels("rack", "r1").Obj(),
				pending(st.NewPod("p").Obj())},
			pod:     "p",
			refused: map[string]string{"bare": "CheckNodeLabelPresence"},
			winner:  "racked",
			nodes:   2,
			lines: []string{"node racked: fits, score 3.00 = 3 x EqualPriority 1.00",
				"node bare: refused by CheckNodeLabelPresence: node(s) didn't have the requested labels"},
		},
		{
			name: "another scheduler's pod is not evaluated",
			objs: []runtime.Object{st.NewNode("n1").Obj(),
				func() *corev1.Pod { p := pending(st.NewPod("p").Obj()); p.Spec.SchedulerName = "custom"; return p }()},
			pod:    "p",
			nodes:  -1,
			lines:  []string{"not scheduled yet", `the scheduler leaves it alone: it names scheduler "custom"`},
			absent: []string{"node n1"},
		},
		{
			name:   "25 nodes: 20 listed, the rest counted",
			objs:   many,
			pod:    "p",
			winner: "n00",
			nodes:  25,
			lines: []string{"25 of 25 node(s) fit now", "node n00: fits", "tied with 24 other(s)", "node n19: fits",
				"... and 5 more node(s) (-o json lists them all)"},
			absent: []string{"node n20:", "node n24:"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hs := explainServer(t, tc.policy, tc.objs...)
			x := getExplanation(t, hs, "/pods/default/"+tc.pod)
			ev := x.Evaluation
			if tc.nodes < 0 && ev != nil {
				t.Errorf("evaluated: %+v", ev)
			}
			if tc.nodes >= 0 && (ev == nil || len(ev.Nodes) != tc.nodes || ev.Winner != tc.winner) {
				t.Fatalf("evaluation %+v, want %d nodes, winner %q", ev, tc.nodes, tc.winner)
			}
			var verdicts []scheduler.NodeVerdict
			if ev != nil {
				verdicts = ev.Nodes
			}
			for _, v := range verdicts {
				if want, refused := tc.refused[v.Node]; refused != !v.Fits || v.Predicate != want {
					t.Errorf("node %s: %+v, want refused by %q", v.Node, v, want)
				}
			}
			text := strings.Join(x.Lines, "\n")
			t.Logf("explain pod/%s:\n%s", tc.pod, text)
			at := 0
			for _, l := range tc.lines {
				i := strings.Index(text[at:], l)
				if i < 0 {
					t.Errorf("no %q after offset %d in:\n%s", l, at, text)
					continue
				}
				at += i
			}
			for _, l := range tc.absent {
				if strings.Contains(text, l) {
					t.Errorf("%q in:\n%s", l, text)
				}
			}
			if n := strings.Count(text, "\n  node "); n > MaxExplainedNodes {
				t.Errorf("%d node lines", n)
			}
		})
	}
}

// TestExplainNode: explain says why a node is not ready, from its Ready condition's
// heartbeat and transition against the grace period, and when its pods are evicted;
// the eviction time is the one node.Decide acts on.
func TestExplainNode(t *testing.T) {
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(explainNow.Add(-d)) }
	ready := func(name string, status corev1.ConditionStatus, reason string, heartbeat, transition time.Duration) *corev1.Node {
		n := st.NewNode(name).Obj()
		n.CreationTimestamp = ago(time.Hour)
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: reason,
			LastHeartbeatTime: ago(heartbeat), LastTransitionTime: ago(transition)}}
		return n
	}
	never := st.NewNode("new").Obj()
	never.Status.Conditions = nil
	never.CreationTimestamp = ago(30 * time.Second)
	gone := onNode(st.NewPod("gone").Obj(), "", false)
	gone.DeletionTimestamp = &metav1.Time{Time: explainNow}

	tests := []struct {
		name     string
		node     *corev1.Node
		ready    corev1.ConditionStatus
		eviction time.Duration // from now; 0: none
		lines    []string
	}{
		{name: "ready", node: ready("n", corev1.ConditionTrue, "KubeletReady", 5*time.Second, time.Hour),
			ready: corev1.ConditionTrue,
			lines: []string{"ready: True (KubeletReady), last heartbeat 5s ago at 09:59:55 (grace period 40s)",
				"healthy: marked Unknown if no heartbeat comes by 10:00:35; nothing is evicted", "2 pod(s) bound here"}},
		{name: "heartbeats stopped, not marked yet", node: ready("n", corev1.ConditionTrue, "KubeletReady", time.Minute, time.Hour),
			ready: corev1.ConditionTrue, eviction: 5*time.Minute - 40*time.Second - time.Minute,
			lines: []string{"last heartbeat 1m0s ago", "marks it Unknown at its next check",
				"2 pod(s) bound here will be evicted at about 10:03:20 (in 3m20s)", "pod default/a", "pod default/b"}},
		{name: "kubelet says not ready", node: ready("n", corev1.ConditionFalse, "KubeletNotReady", 2*time.Second, time.Minute),
			ready: corev1.ConditionFalse, eviction: 4 * time.Minute,
			lines: []string{"ready: False (KubeletNotReady)", "NotReady since 09:59:00", "evicted 5m0s (--pod-eviction-timeout) after that",
				"will be evicted at about 10:04:00 (in 4m0s)"}},
		{name: "unknown for long: eviction due", node: ready("n", corev1.ConditionUnknown, node.ReasonStatusUnknown, 10*time.Minute, 9*time.Minute),
			ready: corev1.ConditionUnknown, eviction: -(10*time.Minute - 5*time.Minute + 40*time.Second),
			lines: []string{"ready: Unknown (NodeStatusUnknown), last heartbeat 10m0s ago", "the kubelet stopped posting status",
				"eviction due since about 09:54:20 (5m40s ago): 2 pod(s) still bound here are being deleted"}},
		{name: "never posted", node: never, ready: corev1.ConditionUnknown, eviction: 5*time.Minute - time.Minute - 30*time.Second,
			lines: []string{"never posted status (created 30s ago; startup grace period 1m0s)", "never ready", "will be evicted at about 10:03:30"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hs := explainServer(t, nil, tc.node, onNode(st.NewPod("a").Obj(), tc.node.Name, false),
				onNode(st.NewPod("b").Obj(), tc.node.Name, false), onNode(st.NewPod("elsewhere").Obj(), "other", false),
				func() *corev1.Pod { p := gone.DeepCopy(); p.Spec.NodeName = tc.node.Name; return p }())
			x := getExplanation(t, hs, "/nodes/"+tc.node.Name)
			s := x.Node
			if s == nil || s.Ready != tc.ready || strings.Join(s.Pods, ",") != "default/a,default/b" {
				t.Fatalf("state %+v", s)
			}
			if (s.EvictionAt != nil) != (tc.eviction != 0) ||
				s.EvictionAt != nil && !s.EvictionAt.Time.Equal(explainNow.Add(tc.eviction)) {
				t.Errorf("eviction at %v, want now%+v", s.EvictionAt, tc.eviction)
			}
			text := strings.Join(x.Lines, "\n")
			t.Logf("explain node/%s:\n%s", tc.node.Name, text)
			for _, l := range tc.lines {
				if !strings.Contains(text, l) {
					t.Errorf("no %q in:\n%s", l, text)
				}
			}
			// The node controller, having watched the node all along, evicts exactly then.
			cfg := node.DefaultConfig()
			obs := watchedAllAlong(tc.node)
			evictsAt := func(at time.Time) bool {
				n := tc.node.DeepCopy()
				if tc.ready == corev1.ConditionFalse { // the kubelet goes on posting
					n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(at)
				}
				return node.Decide(n, obs, cfg, at).Evict
			}
			if s.EvictionAt == nil {
				if evictsAt(explainNow) {
					t.Errorf("node.Decide evicts now")
				}
				return
			}
			if due := s.EvictionAt.Time; evictsAt(due.Add(-time.Second)) || !evictsAt(due) {
				t.Errorf("node.Decide disagrees about %v", due)
			}
		})
	}
}

// watchedAllAlong is what the node controller remembers of a node it saw every
// change of, when it happened.
func watchedAllAlong(n *corev1.Node) node.Observed {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return node.Observed{Heartbeat: c.LastHeartbeatTime.Time, Transition: c.LastTransitionTime.Time, Status: c.Status,
				ProbeAt: c.LastHeartbeatTime.Time, TransitionAt: c.LastTransitionTime.Time}
		}
	}
	at := n.CreationTimestamp.Time
	return node.Observed{Heartbeat: at, Transition: at, ProbeAt: at, TransitionAt: at}
}

// TestExplainBadPolicy: a policy the scheduler would refuse stops the gateway too.
func TestExplainBadPolicy(t *testing.T) {
	store, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, p := range []string{`{"predicates":[{"name":"Nope"}]}`, `{`} {
		if _, err := New(Config{Store: store, OpenAPI: http.NotFoundHandler(), SchedulerPolicy: []byte(p)}); err == nil {
			t.Errorf("policy %s accepted", p)
		}
	}
}

// TestExplainFromSpans: what explain reads from the spans kept. A bound pod's
// explanation holds its node agent's last sync (what woke it, its plan and result,
// and its steps in order) or says none is kept; an RC's holds each sync's
// decisions: creates, deletes, adopted, released, and the expectations outstanding.
func TestExplainFromSpans(t *testing.T) {
	at := func(ms int) time.Time { return explainNow.Add(time.Duration(ms) * time.Millisecond) }
	tid := trace.TraceID{1}
	span := func(id, parent byte, name string, from, to int, attrs ...attribute.KeyValue) tracing.Span {
		sp := tracing.Span{TraceID: tid, SpanID: trace.SpanID{id}, Name: name, Start: at(from), End: at(to), Attrs: attrs}
		if parent != 0 {
			sp.Parent = trace.SpanID{parent}
		}
		for _, kv := range attrs {
			if kv.Key == tracing.ObjectKey {
				sp.Object = kv.Value.AsString()
			}
		}
		return sp
	}
	pod := tracing.ObjectKey.String("pods/default/web")
	rc := tracing.ObjectKey.String("replicationcontrollers/default/rc")
	node := tracing.NodeKey.String("n1")
	tests := []struct {
		name  string
		spans []tracing.Span
		path  string
		check func(x Explanation) error
		lines []string
	}{
		{
			name: "pod: the agent's last sync and its steps",
			spans: []tracing.Span{
				span(1, 0, "pod sync", 0, 5, pod, node, attribute.String("woken.by", "pod changed"), attribute.String("requeue", "0s")),
				span(2, 0, "pod sync", 10, 900, pod, node, attribute.String("woken.by", "pod changed"),
					attribute.Bool("plan.createSandbox", true), attribute.Int("plan.start", 1), attribute.String("requeue", "10s"),
					attribute.Bool("finished", false), attribute.String("pod.uid", "u")),
				span(4, 2, "container create", 700, 750, attribute.String("container.name", "k8s_web.1"), attribute.String("image", "busybox")),
				span(3, 2, "image pull", 20, 690, attribute.String("image", "busybox"), attribute.String("error", "")),
				span(5, 2, "container start", 750, 880, attribute.String("container.id", "c1")),
				span(6, 1, "container start", 1, 2), // another sync's
			},
			path: "/pods/default/web",
			check: func(x Explanation) error {
				ns := x.NodeSync
				if ns == nil || ns.Node != "n1" || ns.Time != "10:00:00.010" || ns.Duration != "890ms" || len(ns.Steps) != 3 ||
					ns.Result["plan.start"] != "1" || ns.Result["requeue"] != "10s" || ns.Result["pod.uid"] != "" {
					return fmt.Errorf("node sync %+v", ns)
				}
				return nil
			},
			lines: []string{"last sync by the node agent of n1 at 10:00:00.010 (trace 01000000000000000000000000000000), 890ms: " +
				"finished=false plan.createSandbox=true plan.start=1 requeue=10s woken.by=pod changed",
				"  image pull 670ms image=busybox\n  container create 50ms container.name=k8s_web.1 image=busybox\n  container start 130ms"},
		},
		{
			name:  "pod: no sync kept",
			spans: []tracing.Span{span(1, 0, "pods binding", 0, 5, pod)},
			path:  "/pods/default/web",
			check: func(x Explanation) error {
				if x.NodeSync != nil {
					return fmt.Errorf("node sync %+v", x.NodeSync)
				}
				return nil
			},
			lines: []string{"no sync by the node agent of n1 is kept"},
		},
		{
			name: "rc: what its syncs decided",
			spans: []tracing.Span{
				span(1, 0, "replicationcontrollers sync", 0, 1, rc, attribute.Int("decided.adopted", 2), attribute.Int("decided.creates", 1)),
				span(2, 0, "replicationcontrollers sync", 5, 6, rc),
				span(3, 0, "replicationcontrollers sync", 10, 11, rc, attribute.Int("decided.released", 1),
					attribute.Int("decided.creates", 1), attribute.Int("waiting.creates", 1)),
			},
			path: "/replicationcontrollers/default/rc",
			check: func(x Explanation) error {
				if len(x.Syncs) != 2 || x.Syncs[0].Adopted != "2" || x.Syncs[1].Released != "1" || x.Syncs[1].WaitingCreates != "1" {
					return fmt.Errorf("syncs %+v", x.Syncs)
				}
				return nil
			},
			lines: []string{"sync at 10:00:00.000 (trace 01000000000000000000000000000000): 1 creates, 0 deletes, 2 adopted, 0 released",
				"sync at 10:00:00.010 (trace 01000000000000000000000000000000): 1 creates, 0 deletes, 0 adopted, 1 released; expectations outstanding: 1 creates"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := tracing.New(tracing.Options{Sampling: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, sp := range tc.spans {
				tr.Store().Add(sp)
			}
			r := st.NewRC("rc", "app", "rc")
			hs := tracedExplainServer(t, tr, nil, st.NewNode("n1").Obj(), onNode(st.NewPod("web").Obj(), "n1", false), r)
			x := getExplanation(t, hs, tc.path)
			if err := tc.check(x); err != nil {
				t.Error(err)
			}
			text := strings.Join(x.Lines, "\n")
			for _, l := range tc.lines {
				if !strings.Contains(text, l) {
					t.Errorf("no %q in:\n%s", l, text)
				}
			}
		})
	}
}
