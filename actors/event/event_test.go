package event

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)

func rec(name, reason, msg string, at time.Duration) Record {
	return Record{
		Involved: corev1.ObjectReference{Kind: "ReplicationController", APIVersion: "v1", Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Source:   corev1.EventSource{Component: "replication-controller"},
		Type:     corev1.EventTypeNormal, Reason: reason, Message: msg, At: metav1.NewTime(t0.Add(at)),
	}
}

func TestName(t *testing.T) {
	node := rec("n1", "NodeReady", "ready", 0)
	node.Involved = corev1.ObjectReference{Kind: "Node", Name: "n1"}
	later := rec("web", "SuccessfulCreate", "Created pod: web-1", time.Hour)
	later.Involved.ResourceVersion = "99"
	tests := []struct {
		name     string
		a, b     Record
		same     bool
		wantNS   string
		wantName *regexp.Regexp
	}{
		{"same key, other time and resourceVersion", rec("web", "SuccessfulCreate", "Created pod: web-1", 0), later, true, "default", regexp.MustCompile(`^web\.[0-9a-f]{16}$`)},
		{"other message", rec("web", "SuccessfulCreate", "Created pod: web-1", 0), rec("web", "SuccessfulCreate", "Created pod: web-2", 0), false, "default", nil},
		{"other reason", rec("web", "SuccessfulCreate", "x", 0), rec("web", "FailedCreate", "x", 0), false, "default", nil},
		{"combined ignores message", Record{Combined: true, Message: "a"}, Record{Combined: true, Message: "b"}, true, "default", nil},
		{"cluster-scoped object lives in default", node, node, true, "default", regexp.MustCompile(`^n1\.[0-9a-f]{16}$`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Name() == tc.b.Name(); got != tc.same {
				t.Errorf("names %q and %q: same = %v, want %v", tc.a.Name(), tc.b.Name(), got, tc.same)
			}
			if ns := tc.a.Namespace(); ns != tc.wantNS {
				t.Errorf("namespace %q, want %q", ns, tc.wantNS)
			}
			if tc.wantName != nil && !tc.wantName.MatchString(tc.a.Name()) {
				t.Errorf("name %q does not match %s", tc.a.Name(), tc.wantName)
			}
		})
	}
}

func TestAggregatorObserve(t *testing.T) {
	created := func(i int, at time.Duration) Record {
		return rec("web", "SuccessfulCreate", fmt.Sprintf("Created pod: web-%d", i), at)
	}
	type step struct {
		r            Record
		wantCombined bool
	}
	var burst []step
	for i := range 12 {
		burst = append(burst, step{created(i, time.Duration(i)*time.Second), i >= MaxSimilar-1})
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first nine distinct messages stay, then combined", burst},
		{"repeats of a known message are never combined", append(append([]step(nil), burst...),
			step{created(3, time.Minute), false}, step{created(11, time.Minute), true})},
		{"a quiet window starts over", append(append([]step(nil), burst...),
			step{created(20, 12*time.Second+SimilarWindow+time.Second), false})},
		{"other reason is not similar", append(append([]step(nil), burst...),
			step{rec("web", "SuccessfulDelete", "Deleted pod: web-0", time.Minute), false})},
		{"other object is not similar", append(append([]step(nil), burst...),
			step{rec("db", "SuccessfulCreate", "Created pod: db-0", time.Minute), false})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g Aggregator
			names := map[string]bool{}
			for i, s := range tc.steps {
				got := g.Observe(s.r)
				if got.Combined != s.wantCombined {
					t.Fatalf("step %d (%s): combined = %v, want %v", i, s.r.Message, got.Combined, s.wantCombined)
				}
				if s.wantCombined {
					if got.Message != CombinedPrefix+s.r.Message {
						t.Errorf("step %d: message %q", i, got.Message)
					}
					names[got.Name()] = true
				} else if got.Message != s.r.Message {
					t.Errorf("step %d: message changed to %q", i, got.Message)
				}
			}
			if len(names) > 1 {
				t.Errorf("combined records name %d events, want 1: %v", len(names), names)
			}
		})
	}
}

func TestAggregatorForgetsQuietKeys(t *testing.T) {
	var g Aggregator
	for i := range maxTracked {
		g.Observe(rec(fmt.Sprintf("rc-%d", i), "SuccessfulCreate", "x", 0))
	}
	g.Observe(rec("late", "SuccessfulCreate", "x", SimilarWindow+time.Second))
	if g.Len() != 1 {
		t.Fatalf("remembers %d keys, want 1", g.Len())
	}
}

func TestNext(t *testing.T) {
	pend := func(rs ...Record) Pending {
		var p Pending
		for _, r := range rs {
			p.Add(r)
		}
		return p
	}
	first := rec("web", "SuccessfulCreate", "Created pod: web-1", 0)
	stored, _ := Next(nil, pend(first))
	stored.UID, stored.ResourceVersion = "ev-uid", "7"
	long := rec("web", "FailedCreate", strings.Repeat("é", MaxMessageBytes), 0)
	combinedA, combinedB := first, first
	combinedA.Combined, combinedA.Message = true, CombinedPrefix+"Created pod: web-10"
	combinedB.Combined, combinedB.Message, combinedB.At = true, CombinedPrefix+"Created pod: web-11", metav1.NewTime(t0.Add(2*time.Second))
	held := rec("web", "SuccessfulCreate", "Created pod: web-1", 6*time.Minute)
	held.Count = 4
	bumpedRV := rec("web", "SuccessfulCreate", "Created pod: web-1", 3*time.Minute)
	bumpedRV.Involved.ResourceVersion = "42"

	tests := []struct {
		name        string
		cur         *corev1.Event
		p           Pending
		wantCreate  bool
		wantCount   int32
		wantFirst   time.Duration
		wantLast    time.Duration
		wantMessage string
		wantRV      string
	}{
		{"create with count 1", nil, pend(first), true, 1, 0, 0, "Created pod: web-1", ""},
		{"create from a burst", nil, pend(first, rec("web", "SuccessfulCreate", "Created pod: web-1", time.Second)), true, 2, 0, time.Second, "Created pod: web-1", ""},
		{"bump", stored, pend(bumpedRV), false, 2, 0, 3 * time.Minute, "Created pod: web-1", "42"},
		{"bump by a burst out of order", stored, pend(rec("web", "SuccessfulCreate", "Created pod: web-1", 5*time.Minute),
			rec("web", "SuccessfulCreate", "Created pod: web-1", 4*time.Minute)), false, 3, 0, 5 * time.Minute, "Created pod: web-1", ""},
		{"a record standing for held occurrences counts them all", stored, pend(held), false, 5, 0, 6 * time.Minute, "Created pod: web-1", ""},
		{"create from a counted record", nil, pend(held), true, 4, 6 * time.Minute, 6 * time.Minute, "Created pod: web-1", ""},
		{"late record moves only firstTimestamp", stored, pend(rec("web", "SuccessfulCreate", "Created pod: web-1", -time.Minute)), false, 2, -time.Minute, 0, "Created pod: web-1", ""},
		{"combined takes the latest message", nil, pend(combinedA, combinedB), true, 2, 0, 2 * time.Second, CombinedPrefix + "Created pod: web-11", ""},
		{"long message is cut on a rune", nil, pend(long), true, 1, 0, 0, strings.Repeat("é", MaxMessageBytes/2), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cur.DeepCopy()
			got, create := Next(tc.cur, tc.p)
			if create != tc.wantCreate {
				t.Fatalf("create = %v, want %v", create, tc.wantCreate)
			}
			if got.Count != tc.wantCount {
				t.Errorf("count %d, want %d", got.Count, tc.wantCount)
			}
			if !got.FirstTimestamp.Time.Equal(t0.Add(tc.wantFirst)) || !got.LastTimestamp.Time.Equal(t0.Add(tc.wantLast)) {
				t.Errorf("first %v last %v, want %v and %v", got.FirstTimestamp, got.LastTimestamp, t0.Add(tc.wantFirst), t0.Add(tc.wantLast))
			}
			if got.Message != tc.wantMessage {
				t.Errorf("message %.60q, want %.60q", got.Message, tc.wantMessage)
			}
			if got.InvolvedObject.ResourceVersion != tc.wantRV {
				t.Errorf("involved resourceVersion %q, want %q", got.InvolvedObject.ResourceVersion, tc.wantRV)
			}
			if got.Name != tc.p.Last.Name() || got.Namespace != "default" || got.Source.Component != "replication-controller" ||
				got.ReportingController != "replication-controller" || got.InvolvedObject.Name != "web" {
				t.Errorf("identity: %s/%s source %+v reporting %q involved %+v", got.Namespace, got.Name, got.Source, got.ReportingController, got.InvolvedObject)
			}
			if tc.cur != nil {
				if got.UID != tc.cur.UID || got.ResourceVersion != tc.cur.ResourceVersion {
					t.Errorf("bump lost uid/resourceVersion: %q %q", got.UID, got.ResourceVersion)
				}
				if tc.cur.Count != before.Count || tc.cur.Message != before.Message {
					t.Error("Next changed the stored event")
				}
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	tests := []struct {
		name string
		e    *corev1.Event
		want time.Duration
	}{
		{"from lastTimestamp", &corev1.Event{FirstTimestamp: at(0), LastTimestamp: at(time.Minute)}, time.Minute + time.Hour},
		{"from firstTimestamp", &corev1.Event{FirstTimestamp: at(time.Second)}, time.Second + time.Hour},
		{"from creationTimestamp", &corev1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(2 * time.Second)}}, 2*time.Second + time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expiry(tc.e, time.Hour); !got.Equal(t0.Add(tc.want)) {
				t.Errorf("expiry %v, want %v", got, t0.Add(tc.want))
			}
		})
	}
}
