package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/event"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"
)

// storedEvents returns the stored events a field selector (as kubectl describe
// sends) matches.
func storedEvents(t testing.TB, st *persistence.Store, selector string) []*corev1.Event {
	t.Helper()
	sel, err := fields.ParseSelector(selector)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := kinds.Lookup("events")
	var out []*corev1.Event
	st.Snapshot("events").Ascend("", "", func(it *persistence.Item) bool {
		if sel.Matches(r.Fields(it.Object())) {
			out = append(out, it.Object().(*corev1.Event))
		}
		return true
	})
	return out
}

// eventSettled returns once the event's actor has handled everything sent to it so
// far, including the sync a resync queues.
func eventSettled(t testing.TB, s *System, k persistence.Key) {
	t.Helper()
	s.env.root.Send(s.env.managers["events"], &resyncRequest{envelope: envelope{trace: "test", key: k}})
	probe(t, s, k) // the resync's syncNow is queued behind this probe
	probe(t, s, k)
}

func eventKey(e *corev1.Event) persistence.Key {
	return persistence.Key{Resource: "events", Namespace: e.Namespace, Name: e.Name}
}

type occurrence struct {
	after    time.Duration // clock advance before recording
	involved kruntime.Object
	reason   string
	message  string
}

func TestRecordEvent(t *testing.T) {
	web := newPod("ns", "web").obj()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1"}} // no TypeMeta: kind from the scheme
	same := func(n int) []occurrence {
		out := make([]occurrence, n)
		for i := range out {
			out[i] = occurrence{time.Second, web, "Pulled", "pulled image nginx"}
		}
		return out
	}
	distinct := func(n int) []occurrence {
		out := make([]occurrence, n)
		for i := range out {
			out[i] = occurrence{time.Second, web, "Created", fmt.Sprintf("created container c%d", i)}
		}
		return out
	}
	type want struct {
		selector string
		count    int32
		message  string
		first    time.Duration // from the clock's start
		last     time.Duration
	}
	tests := []struct {
		name      string
		aggregate bool
		occ       []occurrence
		events    int // events stored in all
		want      []want
	}{
		{"one occurrence creates", true, same(1), 1, []want{
			{"involvedObject.name=web,reason=Pulled", 1, "pulled image nginx", time.Second, time.Second}}},
		{"repeats bump count and lastTimestamp", true, same(50), 1, []want{
			{"involvedObject.name=web,reason=Pulled", 50, "pulled image nginx", time.Second, 50 * time.Second}}},
		{"similar events are combined", true, distinct(25), event.MaxSimilar, []want{
			{"involvedObject.name=web,reason=Created", 16, event.CombinedPrefix + "created container c24", 10 * time.Second, 25 * time.Second},
			{"involvedObject.name=web,reason=Created", 1, "created container c0", time.Second, time.Second}}},
		{"without an aggregator each message is an event", false, distinct(12), 12, []want{
			{"involvedObject.name=web,reason=Created", 1, "created container c11", 12 * time.Second, 12 * time.Second}}},
		{"cluster-scoped object", true, []occurrence{{0, node, "NodeReady", "Node n1 status is now: NodeReady"}}, 1, []want{
			{"involvedObject.kind=Node,involvedObject.name=n1,metadata.namespace=default", 1, "Node n1 status is now: NodeReady", 0, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			clock := newFakeClock()
			start := clock.Now()
			s := startSystem(t, st, clock)
			var agg *event.Aggregator
			if tc.aggregate {
				agg = &event.Aggregator{}
			}
			for _, o := range tc.occ {
				clock.Advance(o.after)
				s.env.recordEvent(s.env.root, agg, "test", o.involved, "kubelet", corev1.EventTypeNormal, o.reason, o.message)
			}
			waitFor(t, "events recorded", func() error {
				all := storedEvents(t, st, "")
				var n int32
				for _, e := range all {
					n += e.Count
				}
				if len(all) != tc.events || int(n) != len(tc.occ) {
					return fmt.Errorf("%d events with %d occurrences, want %d with %d", len(all), n, tc.events, len(tc.occ))
				}
				return nil
			})
			for _, w := range tc.want {
				evs := storedEvents(t, st, w.selector)
				i := slices.IndexFunc(evs, func(e *corev1.Event) bool { return e.Message == w.message })
				if i < 0 {
					t.Fatalf("%s: no event with message %q among %d", w.selector, w.message, len(evs))
				}
				e := evs[i]
				if e.Count != w.count || !e.FirstTimestamp.Time.Equal(start.Add(w.first)) || !e.LastTimestamp.Time.Equal(start.Add(w.last)) {
					t.Errorf("%s: count %d first %v last %v, want %d, %v, %v", e.Name, e.Count, e.FirstTimestamp, e.LastTimestamp,
						w.count, start.Add(w.first), start.Add(w.last))
				}
				if e.UID == "" || e.CreationTimestamp.IsZero() || e.Source.Component != "kubelet" || e.Type != corev1.EventTypeNormal ||
					e.InvolvedObject.UID == "" || e.InvolvedObject.APIVersion != "v1" ||
					!strings.HasPrefix(e.Name, e.InvolvedObject.Name+".") || len(e.Name) != len(e.InvolvedObject.Name)+17 {
					t.Errorf("event fields: %+v", e)
				}
			}
		})
	}
}

func TestEventExpires(t *testing.T) {
	const ttl = time.Hour
	tests := []struct {
		name    string
		steps   []time.Duration // clock advances, each followed by one occurrence
		advance time.Duration   // then, before the look at the expiry
		kept    bool
	}{
		{"younger than the ttl", []time.Duration{0}, ttl - time.Minute, true},
		{"older than the ttl", []time.Duration{0}, ttl + time.Second, false},
		{"a repeat renews it", []time.Duration{0, 50 * time.Minute}, 20 * time.Minute, true},
		{"the last repeat counts", []time.Duration{0, 50 * time.Minute}, ttl, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			clock := newFakeClock()
			s := startSystem(t, st, clock)
			p := newPod("ns", "web").obj()
			for _, d := range tc.steps {
				clock.Advance(d)
				s.env.recordEvent(s.env.root, nil, "test", p, "kubelet", corev1.EventTypeWarning, "BackOff", "back-off restarting")
			}
			var k persistence.Key
			waitFor(t, "event recorded", func() error {
				evs := storedEvents(t, st, "involvedObject.name=web")
				if len(evs) != 1 || int(evs[0].Count) != len(tc.steps) {
					return fmt.Errorf("%d events", len(evs))
				}
				k = eventKey(evs[0])
				return nil
			})
			clock.Advance(tc.advance)
			eventSettled(t, s, k)
			if tc.kept {
				if gone(st, k) {
					t.Fatal("event deleted before its ttl")
				}
				return
			}
			waitFor(t, "event expired", func() error {
				if !gone(st, k) {
					return fmt.Errorf("%s still stored", k.Name)
				}
				return nil
			})
		})
	}
}

func TestEventsSurviveRestart(t *testing.T) {
	st := openStore(t)
	clock := newFakeClock()
	s := startSystem(t, st, clock)
	p := newPod("ns", "web").obj()
	record := func(s *System) {
		s.env.recordEvent(s.env.root, nil, "test", p, "kubelet", corev1.EventTypeNormal, "Pulled", "pulled image nginx")
	}
	count := func(want int32) func() error {
		return func() error {
			evs := storedEvents(t, st, "involvedObject.name=web")
			if len(evs) != 1 || evs[0].Count != want {
				return fmt.Errorf("%d events, want one with count %d", len(evs), want)
			}
			return nil
		}
	}
	record(s)
	record(s)
	waitFor(t, "two occurrences", count(2))
	s.Stop()

	clock.Advance(30 * time.Minute)
	s = startSystem(t, st, clock)
	waitFor(t, "event kept across restart", count(2))
	record(s) // the loaded event's actor bumps it
	waitFor(t, "bump after restart", count(3))
	s.Stop()

	clock.Advance(DefaultEventTTL + time.Second)
	s = startSystem(t, st, clock) // the loaded event is expired: its actor deletes it unasked
	waitFor(t, "expired at start", func() error {
		if evs := storedEvents(t, st, "involvedObject.name=web"); len(evs) > 0 {
			return fmt.Errorf("%d events left", len(evs))
		}
		return nil
	})
	record(s)
	waitFor(t, "recorded again after expiry", count(1))
}

func TestRCRecordsEvents(t *testing.T) {
	st := openStore(t)
	s := startSystem(t, st, RealClock{})
	ctx := context.Background()
	if _, err := s.Create(ctx, rcKey("default", "web"), newRC("default", "web", 3)); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, st, "default", "web", 3)
	byReason := func(reason string) (evs []*corev1.Event, occurrences int32) {
		evs = storedEvents(t, st, "involvedObject.kind=ReplicationController,involvedObject.name=web,reason="+reason)
		for _, e := range evs {
			occurrences += e.Count
		}
		return evs, occurrences
	}
	waitFor(t, "one SuccessfulCreate per pod", func() error {
		evs, n := byReason("SuccessfulCreate")
		if len(evs) != 3 || n != 3 {
			return fmt.Errorf("%d events, %d occurrences", len(evs), n)
		}
		return nil
	})
	owned, _ := rcPods(st, "default", "web")
	evs, _ := byReason("SuccessfulCreate")
	for _, p := range owned {
		if !slices.ContainsFunc(evs, func(e *corev1.Event) bool { return e.Message == "Created pod: "+p.Name }) {
			t.Errorf("no event for pod %s", p.Name)
		}
	}
	if e := evs[0]; e.Type != corev1.EventTypeNormal || e.Source.Component != "replication-controller" || e.InvolvedObject.UID != "uid-rc-web" {
		t.Errorf("event %+v", e)
	}

	scaleRC(t, s, st, "default", "web", 30) // 27 more: similar creates are combined
	waitReplicas(t, st, "default", "web", 30)
	waitFor(t, "creates combined", func() error {
		evs, n := byReason("SuccessfulCreate")
		combined := slices.IndexFunc(evs, func(e *corev1.Event) bool { return strings.HasPrefix(e.Message, event.CombinedPrefix) })
		if len(evs) != event.MaxSimilar || n != 30 || combined < 0 {
			return fmt.Errorf("%d events, %d occurrences, combined at %d", len(evs), n, combined)
		}
		return nil
	})

	scaleRC(t, s, st, "default", "web", 0)
	waitReplicas(t, st, "default", "web", 0)
	waitFor(t, "deletes recorded", func() error {
		if _, n := byReason("SuccessfulDelete"); n != 30 {
			return fmt.Errorf("%d deletes recorded", n)
		}
		return nil
	})
}
