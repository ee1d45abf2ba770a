package gateway

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeactor/kubeactor/actors/node"
	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/actors/scheduler"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// Explanation is the answer of the explain path: why an object is in its state.
type Explanation struct {
	Object string `json:"object"`
	// Lines say it in words, one fact a line.
	Lines []string `json:"lines"`
	// Scheduling is a bound pod's decision record (its scheduler.DecisionAnnotation).
	Scheduling *scheduler.Record `json:"scheduling,omitempty"`
	// Evaluation is a pod's decision evaluated now, every node with its verdict
	// (scheduler.Evaluate); the Lines word the first MaxExplainedNodes.
	Evaluation *scheduler.Evaluation `json:"evaluation,omitempty"`
	// Node is a node's readiness and what eviction would do.
	Node *NodeState `json:"node,omitempty"`
	// NodeSync is the node agent's last traced sync of a bound pod (from the spans
	// kept; nil when its agent does not trace or none is kept).
	NodeSync *NodeSync `json:"nodeSync,omitempty"`
	// Syncs are an RC's recent syncs that decided something (from the traces kept).
	Syncs []SyncDecision `json:"syncs,omitempty"`
	// Partial names the master replicas whose spans are missing from Syncs (they
	// did not answer in time).
	Partial []string `json:"partial,omitempty"`
}

// SyncDecision is what one controller sync decided.
type SyncDecision struct {
	TraceID string `json:"traceId"`
	Time    string `json:"time"`
	Creates string `json:"creates,omitempty"`
	Deletes string `json:"deletes,omitempty"`
	// Adopted and Released count the pods the sync took over (orphans its selector
	// matches) and let go (owned pods whose labels no longer match).
	Adopted  string `json:"adopted,omitempty"`
	Released string `json:"released,omitempty"`
	// WaitingCreates and WaitingDeletes are the RC's expectations at the sync: pod
	// writes it asked for and had not yet seen, which hold further ones back.
	WaitingCreates string `json:"waitingCreates,omitempty"`
	WaitingDeletes string `json:"waitingDeletes,omitempty"`
}

// NodeSync is one sync of a pod by its node agent, from the sync's span: what woke
// it, what it decided and what it did.
type NodeSync struct {
	Node     string `json:"node,omitempty"`
	TraceID  string `json:"traceId"`
	Time     string `json:"time"`
	Duration string `json:"duration"`
	// Result is the span's attributes: woken.by, the plan (plan.*), requeue,
	// finished, and error when the sync failed.
	Result map[string]string `json:"result"`
	// Steps are the sync's children in order: image pulls, container creates and
	// starts, probe transitions, each with its outcome.
	Steps []string `json:"steps,omitempty"`
}

func (s *Server) explain(c echo.Context) error {
	r, ns, key, err := troubleshootKey(c)
	if err != nil {
		return err
	}
	it, err := s.store.Get(persistence.Key{Resource: r.Name, Namespace: ns, Name: c.Param("name")})
	if err != nil {
		return err
	}
	x := Explanation{Object: key, Lines: []string{}}
	switch o := it.Object().(type) {
	case *corev1.Pod:
		s.explainPod(&x, o)
		if o.Spec.NodeName != "" {
			spans, related, partial := s.objectSpans(c, key)
			x.Partial = partial
			explainNodeSync(&x, o.Spec.NodeName, spans, related)
		}
	case *corev1.ReplicationController:
		spans, _, partial := s.objectSpans(c, key)
		x.Partial = partial
		s.explainRC(&x, o, spans)
	case *corev1.Node:
		s.explainNode(&x, o)
	default:
		x.Lines = append(x.Lines, fmt.Sprintf("%s: stored at revision %d; use trace for its history", key, it.Revision))
	}
	return writeJSON(c, http.StatusOK, x)
}

func (s *Server) explainPod(x *Explanation, p *corev1.Pod) {
	add := func(f string, a ...any) { x.Lines = append(x.Lines, fmt.Sprintf(f, a...)) }
	add("phase: %s", p.Status.Phase)
	if p.DeletionTimestamp != nil {
		add("being deleted since %s", p.DeletionTimestamp.UTC().Format("15:04:05"))
	}
	if p.Spec.NodeName == "" {
		s.explainPending(x, p)
		return
	}
	add("node: %s", p.Spec.NodeName)
	if v, ok := p.Annotations[scheduler.DecisionAnnotation]; ok {
		if rec, err := scheduler.DecodeDecision(v); err == nil {
			x.Scheduling = &rec
			add("scheduled on %s with score %.2f: %d of %d nodes fit", rec.Node, rec.Score, rec.Feasible, rec.Nodes)
			for _, ps := range rec.Priorities {
				add("  priority %s: %.2f (weight %d)", ps.Name, ps.Score, ps.Weight)
			}
			for _, reason := range sortedKeys(rec.Rejected) {
				add("  refused by %s: %d node(s)", reason, rec.Rejected[reason])
			}
			for _, n := range rec.Top {
				add("  candidate %s: score %.2f", n.Node, n.Score)
			}
		}
	} else {
		add("bound without a scheduler record (nodeName set by its creator)")
	}
	ev := s.evaluate(p)
	x.Evaluation = &ev
	best := ev.Winner
	if best == "" {
		best = "none"
	}
	add("the same pod evaluated now, as if pending, against %d node(s): %d fit, the best now: %s", len(ev.Nodes), ev.Feasible, best)
	s.addVerdicts(x, ev, p.Spec.NodeName)
	for _, cs := range p.Status.Conditions {
		add("condition %s=%s %s", cs.Type, cs.Status, cs.Reason)
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Running != nil:
			add("container %s: running since %s, %d restarts", cs.Name, cs.State.Running.StartedAt.UTC().Format("15:04:05"), cs.RestartCount)
		case cs.State.Waiting != nil:
			add("container %s: waiting (%s) %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message)
		case cs.State.Terminated != nil:
			add("container %s: terminated (%s, exit %d)", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
		}
	}
}

// explainNodeSync words the last "pod sync" span among spans (about the pod, oldest
// first) and its children among related (the spans of the same traces).
func explainNodeSync(x *Explanation, node string, spans, related []tracing.Span) {
	var last *tracing.Span
	for i := range spans {
		if spans[i].Name == "pod sync" {
			last = &spans[i]
		}
	}
	if last == nil {
		x.Lines = append(x.Lines, fmt.Sprintf("no sync by the node agent of %s is kept (its tracing is off, or its spans were not kept)", node))
		return
	}
	ns := &NodeSync{Node: node, TraceID: last.TraceID.String(), Time: last.Start.UTC().Format("15:04:05.000"),
		Duration: last.End.Sub(last.Start).Round(time.Microsecond).String(), Result: map[string]string{}}
	for _, kv := range last.Attrs {
		switch k := string(kv.Key); {
		case k == string(tracing.NodeKey):
			ns.Node = kv.Value.Emit()
		case k == "woken.by", k == "requeue", k == "finished", k == "error", strings.HasPrefix(k, "plan."):
			ns.Result[k] = kv.Value.Emit()
		}
	}
	var kids []tracing.Span
	for _, sp := range related {
		if sp.TraceID == last.TraceID && sp.Parent == last.SpanID {
			kids = append(kids, sp)
		}
	}
	sort.SliceStable(kids, func(i, j int) bool { return kids[i].Start.Before(kids[j].Start) })
	for _, k := range kids {
		step := fmt.Sprintf("%s %s", k.Name, k.End.Sub(k.Start).Round(time.Microsecond))
		for _, kv := range k.Attrs {
			switch kv.Key {
			case "container.name", "image", "probe", "container", "result", "error":
				if v := kv.Value.Emit(); v != "" {
					step += fmt.Sprintf(" %s=%s", kv.Key, v)
				}
			}
		}
		ns.Steps = append(ns.Steps, step)
	}
	x.NodeSync = ns
	keys := make([]string, 0, len(ns.Result))
	for k := range ns.Result {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	result := make([]string, len(keys))
	for i, k := range keys {
		result[i] = k + "=" + ns.Result[k]
	}
	x.Lines = append(x.Lines, fmt.Sprintf("last sync by the node agent of %s at %s (trace %s), %s: %s",
		ns.Node, ns.Time, ns.TraceID, ns.Duration, strings.Join(result, " ")))
	for _, st := range ns.Steps {
		x.Lines = append(x.Lines, "  "+st)
	}
}

// explainPending says why a pod is not bound: whether the scheduler looks at it at
// all, what it last said, and the decision it would make now, node by node.
func (s *Server) explainPending(x *Explanation, p *corev1.Pod) {
	add := func(f string, a ...any) { x.Lines = append(x.Lines, fmt.Sprintf(f, a...)) }
	add("not scheduled yet")
	if !scheduler.Pending(p) {
		switch {
		case p.DeletionTimestamp != nil, podpkg.Terminal(p):
			add("the scheduler leaves it alone: it is being deleted or has finished")
		default:
			add("the scheduler leaves it alone: it names scheduler %q", p.Spec.SchedulerName)
		}
		return
	}
	if msg, ok := s.lastEvent(p.Namespace, "Pod", p.Name, "FailedScheduling"); ok {
		add("last scheduling attempt: %s", msg)
	} else {
		add("no failed scheduling attempt recorded")
	}
	ev := s.evaluate(p)
	x.Evaluation = &ev
	if ev.Winner == "" {
		d := scheduler.Decision{Nodes: len(ev.Nodes), Feasible: ev.Feasible, Reasons: map[string]int{}}
		for _, v := range ev.Nodes {
			d.Reasons[v.Reason]++
		}
		add("pending now because: %s", scheduler.FailedSchedulingMessage(d))
	} else {
		add("%d of %d node(s) fit now: the next scheduling round places it on %s (or on one tied with it)", ev.Feasible, len(ev.Nodes), ev.Winner)
	}
	s.addVerdicts(x, ev, "")
}

// MaxExplainedNodes is how many nodes an explanation's lines list; its Evaluation
// (-o json) has them all.
const MaxExplainedNodes = 20

// addVerdicts words the first MaxExplainedNodes verdicts (and the node the pod is
// bound to, when further down) and says how many more there are.
func (s *Server) addVerdicts(x *Explanation, ev scheduler.Evaluation, boundTo string) {
	add := func(f string, a ...any) { x.Lines = append(x.Lines, fmt.Sprintf(f, a...)) }
	shown := 0
	for i, v := range ev.Nodes {
		if i >= MaxExplainedNodes && v.Node != boundTo {
			continue
		}
		shown++
		var mark []string
		if v.Node == boundTo {
			mark = append(mark, "bound here")
		}
		if v.Winner {
			w := "best now"
			if boundTo == "" {
				w = "would be chosen"
			}
			if ev.Ties > 1 {
				w += fmt.Sprintf(", tied with %d other(s): the scheduler draws among them", ev.Ties-1)
			}
			mark = append(mark, w)
		}
		suffix := ""
		if len(mark) > 0 {
			suffix = "  <- " + strings.Join(mark, "; ")
		}
		if !v.Fits {
			add("  node %s: refused by %s: %s%s", v.Node, v.Predicate, v.Reason, suffix)
			continue
		}
		parts := make([]string, len(v.Scores))
		for k, ps := range v.Scores {
			parts[k] = fmt.Sprintf("%s %.2f", ps.Name, ps.Score)
			if ps.Weight != 1 {
				parts[k] = fmt.Sprintf("%d x %s", ps.Weight, parts[k])
			}
		}
		add("  node %s: fits, score %.2f = %s%s", v.Node, v.Score, strings.Join(parts, " + "), suffix)
	}
	if more := len(ev.Nodes) - shown; more > 0 {
		add("  ... and %d more node(s) (-o json lists them all)", more)
	}
}

// evaluate runs the scheduler's predicates and priorities, with the server's policy,
// for the pod against the store's current nodes, pods, services, controllers and
// claims (scheduler.Evaluate).
func (s *Server) evaluate(p *corev1.Pod) scheduler.Evaluation {
	var cl scheduler.Cluster
	s.store.Snapshot("nodes").Ascend("", "", func(it *persistence.Item) bool {
		if n, ok := it.Object().(*corev1.Node); ok {
			cl.Nodes = append(cl.Nodes, n)
		}
		return true
	})
	s.store.Snapshot("pods").Ascend("", "", func(it *persistence.Item) bool {
		if o, ok := it.Object().(*corev1.Pod); ok && o.Spec.NodeName != "" {
			cl.Pods = append(cl.Pods, o)
		}
		return true
	})
	s.store.Snapshot("services").Ascend(p.Namespace, "", func(it *persistence.Item) bool {
		if o, ok := it.Object().(*corev1.Service); ok {
			cl.Services = append(cl.Services, o)
		}
		return true
	})
	s.store.Snapshot("replicationcontrollers").Ascend(p.Namespace, "", func(it *persistence.Item) bool {
		if o, ok := it.Object().(*corev1.ReplicationController); ok {
			cl.Controllers = append(cl.Controllers, o)
		}
		return true
	})
	cl.Claims = func(ns, name string) *corev1.PersistentVolumeClaim {
		it, err := s.store.Get(persistence.Key{Resource: "persistentvolumeclaims", Namespace: ns, Name: name})
		if err != nil {
			return nil
		}
		c, _ := it.Object().(*corev1.PersistentVolumeClaim)
		return c
	}
	return scheduler.Evaluate(p, cl, &s.policy)
}

// explainRC explains an RC; spans are the spans kept about it, oldest first.
func (s *Server) explainRC(x *Explanation, rc *corev1.ReplicationController, spans []tracing.Span) {
	add := func(f string, a ...any) { x.Lines = append(x.Lines, fmt.Sprintf(f, a...)) }
	want := int32(1)
	if rc.Spec.Replicas != nil {
		want = *rc.Spec.Replicas
	}
	active, terminating := 0, 0
	sel := labels.SelectorFromSet(rc.Spec.Selector)
	s.store.Snapshot("pods").Ascend(rc.Namespace, "", func(it *persistence.Item) bool {
		p, ok := it.Object().(*corev1.Pod)
		if !ok || len(rc.Spec.Selector) == 0 || !sel.Matches(labels.Set(p.Labels)) {
			return true
		}
		switch {
		case p.DeletionTimestamp != nil:
			terminating++
		case p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed:
			active++
		}
		return true
	})
	add("desired %d replicas, status.replicas %d, %d active pods match the selector, %d being deleted",
		want, rc.Status.Replicas, active, terminating)
	switch {
	case int32(active) < want:
		add("the next sync creates %d pod(s)", int(want)-active)
	case int32(active) > want:
		add("the next sync deletes %d pod(s)", active-int(want))
	default:
		add("settled: nothing to do")
	}
	for _, sp := range spans {
		if !strings.HasSuffix(sp.Name, " sync") {
			continue
		}
		d := SyncDecision{TraceID: sp.TraceID.String(), Time: sp.Start.UTC().Format("15:04:05.000")}
		for _, kv := range sp.Attrs {
			switch kv.Key {
			case "decided.creates":
				d.Creates = kv.Value.Emit()
			case "decided.deletes":
				d.Deletes = kv.Value.Emit()
			case "decided.adopted":
				d.Adopted = kv.Value.Emit()
			case "decided.released":
				d.Released = kv.Value.Emit()
			case "waiting.creates":
				d.WaitingCreates = kv.Value.Emit()
			case "waiting.deletes":
				d.WaitingDeletes = kv.Value.Emit()
			}
		}
		if d.Creates == "" && d.Deletes == "" && d.Adopted == "" && d.Released == "" && d.WaitingCreates == "" && d.WaitingDeletes == "" {
			continue
		}
		x.Syncs = append(x.Syncs, d)
		line := fmt.Sprintf("sync at %s (trace %s): %s creates, %s deletes", d.Time, d.TraceID, orZero(d.Creates), orZero(d.Deletes))
		if d.Adopted != "" || d.Released != "" {
			line += fmt.Sprintf(", %s adopted, %s released", orZero(d.Adopted), orZero(d.Released))
		}
		if d.WaitingCreates != "" || d.WaitingDeletes != "" {
			line += fmt.Sprintf("; expectations outstanding: %s creates and %s deletes it asked for and has not seen yet (nothing more until they appear)",
				orZero(d.WaitingCreates), orZero(d.WaitingDeletes))
		}
		add("%s", line)
	}
}

// NodeState is a node's readiness as the node controller judges it, and what the
// eviction of its pods would do.
type NodeState struct {
	Ready   corev1.ConditionStatus `json:"ready"` // Unknown also when never posted
	Reason  string                 `json:"reason,omitempty"`
	Message string                 `json:"message,omitempty"`
	// LastHeartbeat is the Ready condition's; nil when the node never posted status.
	LastHeartbeat *metav1.Time `json:"lastHeartbeat,omitempty"`
	HeartbeatAge  string       `json:"heartbeatAge,omitempty"`
	// GracePeriod is --node-monitor-grace-period, or --node-startup-grace-period for
	// a node that never posted.
	GracePeriod        string `json:"gracePeriod"`
	PodEvictionTimeout string `json:"podEvictionTimeout"`
	// EvictionAt is when the node controller evicts the node's pods if it stays as it
	// is; nil while it is Ready with fresh heartbeats.
	EvictionAt *metav1.Time `json:"evictionAt,omitempty"`
	// Pods are namespace/name of the pods bound here that an eviction deletes.
	Pods []string `json:"pods"`
}

func (s *Server) explainNode(x *Explanation, n *corev1.Node) {
	add := func(f string, a ...any) { x.Lines = append(x.Lines, fmt.Sprintf(f, a...)) }
	if n.Spec.Unschedulable {
		add("cordoned: the scheduler places no new pods here")
	}
	var pods []*corev1.Pod
	s.store.Snapshot("pods").Ascend("", "", func(it *persistence.Item) bool {
		if p, ok := it.Object().(*corev1.Pod); ok && p.Spec.NodeName == n.Name {
			pods = append(pods, p)
		}
		return true
	})
	now := s.now()
	st := nodeState(n, pods, s.nodeTimes, now)
	x.Node = &st
	if st.LastHeartbeat == nil {
		add("ready: Unknown: the node never posted status (created %s ago; startup grace period %s)",
			age(now, n.CreationTimestamp.Time), st.GracePeriod)
	} else {
		why := st.Reason
		if st.Message != "" {
			why += ": " + st.Message
		}
		add("ready: %s (%s), last heartbeat %s ago at %s (grace period %s)", st.Ready, why, st.HeartbeatAge,
			st.LastHeartbeat.UTC().Format("15:04:05"), st.GracePeriod)
	}
	grace := s.nodeTimes.MonitorGracePeriod
	fromHeartbeat := fmt.Sprintf("pods are evicted %s (--pod-eviction-timeout) after the last heartbeat less the grace period", st.PodEvictionTimeout)
	switch {
	case st.LastHeartbeat == nil:
		add("never ready: pods are evicted %s after its creation less the startup grace period", st.PodEvictionTimeout)
	case st.Ready == corev1.ConditionTrue && st.EvictionAt == nil:
		add("healthy: marked Unknown if no heartbeat comes by %s; nothing is evicted",
			st.LastHeartbeat.Add(grace).UTC().Format("15:04:05"))
	case st.Ready == corev1.ConditionUnknown:
		add("NotReady: the kubelet stopped posting status; %s", fromHeartbeat)
	case now.Before(st.LastHeartbeat.Add(grace)): // False, posted by the kubelet
		add("NotReady since %s (the kubelet says so): pods are evicted %s (--pod-eviction-timeout) after that",
			st.transition(n).UTC().Format("15:04:05"), st.PodEvictionTimeout)
	default:
		add("no heartbeat for longer than the grace period: the node controller marks it Unknown at its next check; %s", fromHeartbeat)
	}
	if st.EvictionAt != nil {
		if now.Before(st.EvictionAt.Time) {
			add("%d pod(s) bound here will be evicted at about %s (in %s) if the node stays not ready",
				len(st.Pods), st.EvictionAt.UTC().Format("15:04:05"), age(st.EvictionAt.Time, now))
		} else {
			add("eviction due since about %s (%s ago): %d pod(s) still bound here are being deleted at the evictor's pace",
				st.EvictionAt.UTC().Format("15:04:05"), age(now, st.EvictionAt.Time), len(st.Pods))
		}
	} else {
		add("%d pod(s) bound here", len(st.Pods))
	}
	for i, p := range st.Pods {
		if i == MaxExplainedNodes {
			add("  ... and %d more pod(s) (-o json lists them all)", len(st.Pods)-i)
			break
		}
		add("  pod %s", p)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			continue
		}
		add("condition %s=%s (%s) %s, last heartbeat %s", c.Type, c.Status, c.Reason, c.Message,
			c.LastHeartbeatTime.UTC().Format("15:04:05"))
	}
}

// nodeState reads a node's Ready condition as node.Decide does: a node that never
// posted status gets the startup grace period from its creation; pods are evicted
// PodEvictionTimeout after the transition of a False condition the kubelet keeps
// posting, or after the last heartbeat less the grace period when the status is (or
// is about to be marked, heartbeats having stopped) Unknown. The controller counts on its own clock from when it saw those times, so
// after a restart of the controller it waits a fresh grace period: the times are
// those of an undisturbed controller.
func nodeState(n *corev1.Node, pods []*corev1.Pod, cfg node.Config, now time.Time) NodeState {
	st := NodeState{Ready: corev1.ConditionUnknown, GracePeriod: cfg.MonitorGracePeriod.String(),
		PodEvictionTimeout: cfg.PodEvictionTimeout.String(), Pods: []string{}}
	for _, v := range node.Victims(n.Name, pods) {
		st.Pods = append(st.Pods, v.String())
	}
	sort.Strings(st.Pods)
	var cond *corev1.NodeCondition
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			cond = &n.Status.Conditions[i]
			break
		}
	}
	grace, heartbeat := cfg.MonitorGracePeriod, n.CreationTimestamp.Time
	if cond == nil {
		grace = cfg.StartupGracePeriod
		st.GracePeriod = grace.String()
	} else {
		st.Ready, st.Reason, st.Message = cond.Status, cond.Reason, cond.Message
		hb := cond.LastHeartbeatTime
		st.LastHeartbeat, heartbeat = &hb, hb.Time
		st.HeartbeatAge = age(now, heartbeat)
	}
	fresh := cond != nil && now.Before(heartbeat.Add(grace))
	var due time.Time
	switch {
	case st.Ready == corev1.ConditionTrue && fresh:
		return st
	case st.Ready == corev1.ConditionFalse && fresh: // the kubelet posts that it is not ready
		due = cond.LastTransitionTime.Add(cfg.PodEvictionTimeout)
	default: // Unknown, or about to be marked so: heartbeats stopped
		due = heartbeat.Add(cfg.PodEvictionTimeout - grace)
	}
	at := metav1.NewTime(due)
	st.EvictionAt = &at
	return st
}

// transition is when the node's Ready condition last changed.
func (st NodeState) transition(n *corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time
		}
	}
	return n.CreationTimestamp.Time
}

// age is to - from, rounded to the second, never negative.
func age(to, from time.Time) string {
	return max(to.Sub(from), 0).Round(time.Second).String()
}

// lastEvent is the message of the latest event of reason about the object.
func (s *Server) lastEvent(ns, kind, name, reason string) (string, bool) {
	var best *corev1.Event
	s.store.Snapshot("events").Ascend(ns, "", func(it *persistence.Item) bool {
		e, ok := it.Object().(*corev1.Event)
		if ok && e.Reason == reason && e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name &&
			(best == nil || best.LastTimestamp.Before(&e.LastTimestamp)) {
			best = e
		}
		return true
	})
	if best == nil {
		return "", false
	}
	return best.Message, true
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// explainConfig reads the scheduler policy and node timing explain uses.
func (s *Server) explainConfig(cfg Config) error {
	s.policy = scheduler.DefaultPolicy()
	if cfg.SchedulerPolicy != nil {
		p, err := scheduler.ParsePolicy(cfg.SchedulerPolicy)
		if err != nil {
			return fmt.Errorf("gateway: scheduler policy: %w", err)
		}
		s.policy = p
	}
	s.nodeTimes = cfg.NodeMonitoring
	d := node.DefaultConfig()
	if s.nodeTimes.MonitorGracePeriod <= 0 {
		s.nodeTimes.MonitorGracePeriod = d.MonitorGracePeriod
	}
	if s.nodeTimes.StartupGracePeriod <= 0 {
		s.nodeTimes.StartupGracePeriod = d.StartupGracePeriod
	}
	if s.nodeTimes.PodEvictionTimeout <= 0 {
		s.nodeTimes.PodEvictionTimeout = d.PodEvictionTimeout
	}
	return nil
}
