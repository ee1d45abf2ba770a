package node

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0  = time.Date(2015, 8, 4, 14, 34, 22, 0, time.UTC) // node created
	cfg = DefaultConfig()
)

type nodeB struct{ n *corev1.Node }

func newNode(name string) *nodeB {
	return &nodeB{&corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: name, CreationTimestamp: metav1.NewTime(t0), Labels: map[string]string{HostnameLabel: name},
	}}}
}

func (b *nodeB) ready(s corev1.ConditionStatus, heartbeat, transition time.Time) *nodeB {
	b.n.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: s, Reason: "kubelet is posting ready status",
		LastHeartbeatTime: metav1.NewTime(heartbeat), LastTransitionTime: metav1.NewTime(transition),
	}}
	return b
}
func (b *nodeB) noLabels() *nodeB  { b.n.Labels = nil; return b }
func (b *nodeB) obj() *corev1.Node { return b.n }
func at(d time.Duration) time.Time { return t0.Add(d) }
func seen(probe, transition time.Duration, hb, tr time.Time, st corev1.ConditionStatus) Observed {
	return Observed{Heartbeat: hb, Transition: tr, Status: st, ProbeAt: at(probe), TransitionAt: at(transition)}
}

func pod(ns, name, node string, terminating bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	if terminating {
		ts := metav1.NewTime(t0)
		p.DeletionTimestamp = &ts
	}
	return p
}

func TestDecide(t *testing.T) {
	pods := []*corev1.Pod{pod("default", "a", "n1", false), pod("kube-system", "b", "n1", false), pod("default", "gone", "n1", true), pod("default", "elsewhere", "n2", false)}
	hb := at(10 * time.Second)
	tests := []struct {
		name          string
		node          *corev1.Node
		obs           Observed
		now           time.Time
		wantCondition *corev1.NodeCondition // the Ready condition written, nil when none
		wantLabel     bool
		wantEvict     []string
		wantEvents    []string
		wantNext      time.Time
		wantProbe     time.Time
	}{
		{
			name: "fresh heartbeat: look again when the grace period ends",
			node: newNode("n1").ready(corev1.ConditionTrue, hb, hb).obj(), obs: seen(10*time.Second, 10*time.Second, hb, hb, corev1.ConditionTrue),
			now: at(30 * time.Second), wantNext: at(50 * time.Second), wantProbe: at(10 * time.Second),
		},
		{
			name: "missing hostname label is added",
			node: newNode("n1").noLabels().ready(corev1.ConditionTrue, hb, hb).obj(), obs: seen(10*time.Second, 10*time.Second, hb, hb, corev1.ConditionTrue),
			now: at(30 * time.Second), wantLabel: true, wantNext: at(50 * time.Second), wantProbe: at(10 * time.Second),
		},
		{
			name: "new heartbeat moves the probe time to the controller's now",
			node: newNode("n1").ready(corev1.ConditionTrue, at(25*time.Second), hb).obj(), obs: seen(10*time.Second, 10*time.Second, hb, hb, corev1.ConditionTrue),
			now: at(31 * time.Second), wantNext: at(71 * time.Second), wantProbe: at(31 * time.Second),
		},
		{
			name: "no heartbeat for the grace period: Unknown",
			node: newNode("n1").ready(corev1.ConditionTrue, hb, hb).obj(), obs: seen(10*time.Second, 10*time.Second, hb, hb, corev1.ConditionTrue),
			now: at(50 * time.Second),
			wantCondition: &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: ReasonStatusUnknown, Message: MessageStatusUnknown,
				LastHeartbeatTime: metav1.NewTime(hb), LastTransitionTime: metav1.NewTime(at(50 * time.Second))},
			wantEvents: []string{EventNodeNotReady}, wantNext: at(10*time.Second + 5*time.Minute - 40*time.Second), wantProbe: at(10 * time.Second),
		},
		{
			name: "never posted, within the startup grace period",
			node: newNode("n1").obj(), now: at(59 * time.Second), wantNext: at(60 * time.Second), wantProbe: t0,
			wantEvents: []string{EventRegisteredNode},
		},
		{
			name: "never posted after the startup grace period: Unknown",
			node: newNode("n1").obj(), now: at(60 * time.Second),
			wantCondition: &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: ReasonStatusNeverUpdated, Message: MessageStatusNeverUpdated,
				LastHeartbeatTime: metav1.NewTime(t0), LastTransitionTime: metav1.NewTime(at(60 * time.Second))},
			wantNext: at(4 * time.Minute), wantProbe: t0, wantEvents: []string{EventRegisteredNode},
		},
		{
			name: "first sight after a restart: a fresh grace period, whatever the agent's clock says",
			node: newNode("n1").ready(corev1.ConditionTrue, hb, hb).obj(),
			now:  at(time.Hour), wantNext: at(time.Hour + 40*time.Second), wantProbe: at(time.Hour),
			wantEvents: []string{EventRegisteredNode, EventNodeReady},
		},
		{
			name: "Unknown, eviction not due yet",
			node: newNode("n1").ready(corev1.ConditionUnknown, hb, at(50*time.Second)).obj(), obs: seen(10*time.Second, 50*time.Second, hb, at(50*time.Second), corev1.ConditionUnknown),
			now: at(4 * time.Minute), wantNext: at(10*time.Second + 5*time.Minute - 40*time.Second), wantProbe: at(10 * time.Second),
		},
		{
			name: "Unknown long enough: pods evicted, terminating and other nodes' pods left alone",
			node: newNode("n1").ready(corev1.ConditionUnknown, hb, at(50*time.Second)).obj(), obs: seen(10*time.Second, 50*time.Second, hb, at(50*time.Second), corev1.ConditionUnknown),
			now: at(10*time.Second + 5*time.Minute - 40*time.Second), wantEvict: []string{"default/a", "kube-system/b"}, wantProbe: at(10 * time.Second),
		},
		{
			name: "NotReady under the eviction timeout",
			node: newNode("n1").ready(corev1.ConditionFalse, at(5*time.Minute+50*time.Second), at(time.Minute)).obj(), obs: seen(5*time.Minute+50*time.Second, time.Minute, at(5*time.Minute+50*time.Second), at(time.Minute), corev1.ConditionFalse),
			now: at(5*time.Minute + 59*time.Second), wantNext: at(6 * time.Minute), wantProbe: at(5*time.Minute + 50*time.Second),
		},
		{
			name: "NotReady for the eviction timeout: evicted",
			node: newNode("n1").ready(corev1.ConditionFalse, at(5*time.Minute+50*time.Second), at(time.Minute)).obj(), obs: seen(5*time.Minute+50*time.Second, time.Minute, at(5*time.Minute+50*time.Second), at(time.Minute), corev1.ConditionFalse),
			now: at(6 * time.Minute), wantEvict: []string{"default/a", "kube-system/b"}, wantNext: at(6*time.Minute + 30*time.Second), wantProbe: at(5*time.Minute + 50*time.Second),
		},
		{
			name: "Ready again: nothing evicted",
			node: newNode("n1").ready(corev1.ConditionTrue, at(time.Hour), at(time.Hour)).obj(), obs: seen(time.Minute, time.Minute, hb, hb, corev1.ConditionUnknown),
			now: at(time.Hour), wantNext: at(time.Hour + 40*time.Second), wantProbe: at(time.Hour),
			wantEvents: []string{EventNodeReady},
		},
		{
			name: "eviction long due: still evicting (the evictor paces it)",
			node: newNode("n1").ready(corev1.ConditionUnknown, hb, at(50*time.Second)).obj(), obs: seen(10*time.Second, 50*time.Second, hb, at(50*time.Second), corev1.ConditionUnknown),
			now: at(time.Hour), wantEvict: []string{"default/a", "kube-system/b"}, wantProbe: at(10 * time.Second),
		},
		{
			name: "Unknown with nothing left to evict: no timer",
			node: newNode("n3").ready(corev1.ConditionUnknown, hb, at(50*time.Second)).obj(), obs: seen(10*time.Second, 50*time.Second, hb, at(50*time.Second), corev1.ConditionUnknown),
			now: at(time.Hour), wantProbe: at(10 * time.Second),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := Decide(tc.node, tc.obs, cfg, tc.now)
			switch {
			case tc.wantCondition == nil && plan.Status != nil:
				t.Errorf("status written: %+v", plan.Status)
			case tc.wantCondition != nil && plan.Status == nil:
				t.Errorf("no status written")
			case tc.wantCondition != nil:
				got := readyCondition(plan.Status.Conditions)
				if got == nil || !got.LastHeartbeatTime.Equal(&tc.wantCondition.LastHeartbeatTime) || !got.LastTransitionTime.Equal(&tc.wantCondition.LastTransitionTime) ||
					got.Status != tc.wantCondition.Status || got.Reason != tc.wantCondition.Reason || got.Message != tc.wantCondition.Message || len(plan.Status.Conditions) != 1 {
					t.Errorf("condition = %+v, want %+v", got, tc.wantCondition)
				}
				if len(tc.node.Status.Conditions) > 0 && tc.node.Status.Conditions[0].Status == corev1.ConditionUnknown {
					t.Errorf("the node given was modified")
				}
			}
			if plan.Hostname != tc.wantLabel {
				t.Errorf("hostname label = %v, want %v", plan.Hostname, tc.wantLabel)
			}
			var evicted []string
			if plan.Evict {
				for _, n := range Victims(tc.node.Name, pods) {
					evicted = append(evicted, n.String())
				}
			}
			if !slices.Equal(evicted, tc.wantEvict) {
				t.Errorf("evicted %v, want %v", evicted, tc.wantEvict)
			}
			if !slices.Equal(plan.Events, tc.wantEvents) {
				t.Errorf("events %q, want %q", plan.Events, tc.wantEvents)
			}
			if !plan.NextCheck.Equal(tc.wantNext) {
				t.Errorf("next check %v, want %v", plan.NextCheck, tc.wantNext)
			}
			if !plan.Observed.ProbeAt.Equal(tc.wantProbe) {
				t.Errorf("probe at %v, want %v", plan.Observed.ProbeAt, tc.wantProbe)
			}
		})
	}
}

// TestLifecycle drives one node through time, applying each plan as the actor would:
// heartbeats every 10s until 1m, then silence.
func TestLifecycle(t *testing.T) {
	n := newNode("n1").obj()
	pods := []*corev1.Pod{pod("default", "web", "n1", false)}
	var obs Observed
	var unknownAt, evictedAt time.Time
	for now := t0; now.Before(at(10 * time.Minute)); now = now.Add(5 * time.Second) {
		if now.After(t0) && !now.After(at(time.Minute)) && now.Sub(t0)%(10*time.Second) == 0 {
			n = newNode("n1").ready(corev1.ConditionTrue, now, at(10*time.Second)).obj()
		}
		plan := Decide(n, obs, cfg, now)
		obs = plan.Observed
		if plan.Status != nil {
			if !unknownAt.IsZero() {
				t.Fatalf("status written twice, at %v and %v", unknownAt, now)
			}
			unknownAt = now
			n = n.DeepCopy()
			n.Status = *plan.Status
		}
		if plan.Evict && len(Victims(n.Name, pods)) > 0 {
			evictedAt = now
			pods = nil
		}
	}
	if want := at(time.Minute + 40*time.Second); !unknownAt.Equal(want) {
		t.Errorf("Unknown at %v, want %v", unknownAt.Sub(t0), want.Sub(t0))
	}
	// Unknown evicts at the last heartbeat + (podEvictionTimeout - grace period).
	if want := at(time.Minute + 5*time.Minute - 40*time.Second); !evictedAt.Equal(want) {
		t.Errorf("evicted at %v, want %v", evictedAt.Sub(t0), want.Sub(t0))
	}
}

// TestEvictionRateLimit: 15 nodes ask for evictions together; the evictor's bucket
// lets 10 be evicted at once, then one every 10 seconds.
func TestEvictionRateLimit(t *testing.T) {
	start := at(time.Hour)
	ev := NewEvictor(cfg.DeletingPodsQPS, cfg.DeletingPodsBurst, start)
	for i := range 15 {
		name := fmt.Sprintf("n%02d", i)
		ev.Request(Eviction{Node: name, Pods: Victims(name, []*corev1.Pod{pod("default", "p-"+name, name, false)})})
	}
	steps := []struct {
		after     time.Duration
		wantCount int // nodes evicted so far
		wantNext  time.Duration
	}{{0, 10, 10 * time.Second}, {5 * time.Second, 10, 10 * time.Second}, {10 * time.Second, 11, 20 * time.Second},
		{19 * time.Second, 11, 20 * time.Second}, {20 * time.Second, 12, 30 * time.Second}, {50 * time.Second, 15, 0}}
	evicted := map[string]bool{}
	for _, st := range steps {
		t.Run(st.after.String(), func(t *testing.T) {
			due, next := ev.Drain(start.Add(st.after))
			for _, e := range due {
				if evicted[e.Node] || len(e.Pods) != 1 {
					t.Fatalf("eviction %+v twice or without its pod", e)
				}
				evicted[e.Node] = true
			}
			if len(evicted) != st.wantCount {
				t.Fatalf("evicted %d nodes, want %d", len(evicted), st.wantCount)
			}
			if want := start.Add(st.wantNext); st.wantNext == 0 && !next.IsZero() || st.wantNext != 0 && !next.Equal(want) {
				t.Fatalf("next token at %v, want %v", next, st.wantNext)
			}
		})
	}
}

func TestEvictorRequestAndCancel(t *testing.T) {
	ev := NewEvictor(0.1, 1, t0)
	ev.Request(Eviction{Node: "a", Trace: "first"})
	ev.Request(Eviction{Node: "b"})
	ev.Request(Eviction{Node: "a", Trace: "second"}) // replaces, keeps its place
	ev.Request(Eviction{Node: "c"})
	ev.Cancel("b")
	ev.Cancel("missing")
	var order []string
	for now := t0; now.Before(at(time.Minute)); now = now.Add(10 * time.Second) {
		due, _ := ev.Drain(now)
		for _, e := range due {
			order = append(order, e.Node+":"+e.Trace)
		}
	}
	if want := []string{"a:second", "c:"}; !slices.Equal(order, want) {
		t.Fatalf("evicted %v, want %v", order, want)
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(0.1, 2, t0)
	var ok bool
	steps := []struct {
		at      time.Duration
		wantOK  bool
		wantAvl time.Duration // Available after the step
	}{{0, true, 0}, {0, true, 10 * time.Second}, {0, false, 10 * time.Second}, {5 * time.Second, false, 10 * time.Second}, {10 * time.Second, true, 20 * time.Second}, {time.Hour, true, time.Hour}}
	for i, st := range steps {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if l, ok = l.Take(at(st.at)); ok != st.wantOK {
				t.Fatalf("take at %v = %v", st.at, ok)
			}
			if got := l.Available(at(st.at)); !got.Equal(at(st.wantAvl)) {
				t.Fatalf("available %v, want %v", got.Sub(t0), st.wantAvl)
			}
		})
	}
	if _, ok := (Limiter{Burst: 1}).Take(t0); ok {
		t.Fatal("an empty bucket without QPS gave a token")
	}
	if !(Limiter{Burst: 1}).Available(t0).IsZero() {
		t.Fatal("an empty bucket without QPS will never refill")
	}
}
