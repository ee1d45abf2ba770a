package gateway

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeactor/kubeactor/actors/scheduler"
	"github.com/kubeactor/kubeactor/persistence"
)

// Explanation is the answer of the explain path: why an object is in its state.
type Explanation struct {
	Object string `json:"object"`
	// Lines say it in words, one fact a line.
	Lines []string `json:"lines"`
	// Scheduling is a bound pod's decision record (its scheduler.DecisionAnnotation).
	Scheduling *scheduler.Record `json:"scheduling,omitempty"`
	// Syncs are an RC's recent syncs that decided something (from the traces kept).
	Syncs []SyncDecision `json:"syncs,omitempty"`
}

// SyncDecision is what one controller sync decided.
type SyncDecision struct {
	TraceID string `json:"traceId"`
	Time    string `json:"time"`
	Creates string `json:"creates,omitempty"`
	Deletes string `json:"deletes,omitempty"`
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
	switch o := it.Object.(type) {
	case *corev1.Pod:
		s.explainPod(&x, o)
	case *corev1.ReplicationController:
		s.explainRC(&x, key, o)
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
		add("not scheduled yet")
		if msg, ok := s.lastEvent(p.Namespace, "Pod", p.Name, "FailedScheduling"); ok {
			add("pending because: %s", msg)
		} else {
			add("pending: waiting for a scheduling round (no failure recorded)")
		}
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

func (s *Server) explainRC(x *Explanation, key string, rc *corev1.ReplicationController) {
	add := func(f string, a ...any) { x.Lines = append(x.Lines, fmt.Sprintf(f, a...)) }
	want := int32(1)
	if rc.Spec.Replicas != nil {
		want = *rc.Spec.Replicas
	}
	active, terminating := 0, 0
	sel := labels.SelectorFromSet(rc.Spec.Selector)
	s.store.Snapshot("pods").Ascend(rc.Namespace, "", func(it *persistence.Item) bool {
		p, ok := it.Object.(*corev1.Pod)
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
	if st := s.tracer.Store(); st != nil {
		for _, sp := range st.Object(key) {
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
				}
			}
			if d.Creates == "" && d.Deletes == "" {
				continue
			}
			x.Syncs = append(x.Syncs, d)
			add("sync at %s (trace %s): %s creates, %s deletes", d.Time, d.TraceID, orZero(d.Creates), orZero(d.Deletes))
		}
	}
}

func (s *Server) explainNode(x *Explanation, n *corev1.Node) {
	add := func(f string, a ...any) { x.Lines = append(x.Lines, fmt.Sprintf(f, a...)) }
	if n.Spec.Unschedulable {
		add("cordoned: the scheduler places no new pods here")
	}
	for _, c := range n.Status.Conditions {
		add("condition %s=%s (%s) %s, last heartbeat %s", c.Type, c.Status, c.Reason, c.Message,
			c.LastHeartbeatTime.UTC().Format("15:04:05"))
	}
	pods := 0
	s.store.Snapshot("pods").Ascend("", "", func(it *persistence.Item) bool {
		if p, ok := it.Object.(*corev1.Pod); ok && p.Spec.NodeName == n.Name {
			pods++
		}
		return true
	})
	add("%d pod(s) bound here: if the node stays NotReady past the eviction timeout they are deleted", pods)
}

// lastEvent is the message of the latest event of reason about the object.
func (s *Server) lastEvent(ns, kind, name, reason string) (string, bool) {
	var best *corev1.Event
	s.store.Snapshot("events").Ascend(ns, "", func(it *persistence.Item) bool {
		e, ok := it.Object.(*corev1.Event)
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
