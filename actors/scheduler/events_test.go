package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func occurrence(pod, msg string) HeldEvent {
	return HeldEvent{Key: "default/" + pod, Type: "Warning", Reason: "FailedScheduling", Message: msg}
}

// scheduled is a droppable occurrence: a Scheduled event (its key names the event, so
// a pod's binding does not drop it).
func scheduled(pod string) HeldEvent {
	return HeldEvent{Key: "default/" + pod + "\x00Scheduled", Type: "Normal", Reason: "Scheduled", Message: "m", Droppable: true}
}

func TestEventBudget(t *testing.T) {
	type offer struct {
		at   time.Duration
		pod  string
		msg  string // "" offers a droppable Scheduled occurrence
		sent bool
	}
	type flush struct {
		at   time.Duration
		want []string // pod:count:message, oldest first
		next time.Duration
	}
	tests := []struct {
		name    string
		rate    float64
		burst   int
		maxHeld int // droppable occurrences held at most; 0: 2
		offers  []offer
		drop    string
		dropped int64
		flush   flush
	}{
		{
			name: "within the burst every occurrence is written at once", rate: 1, burst: 3,
			offers: []offer{{0, "a", "m", true}, {0, "b", "m", true}, {0, "a", "m", true}},
			flush:  flush{at: 0, next: -1},
		},
		{
			name: "beyond the burst occurrences are held, one per pod, counted", rate: 1, burst: 1,
			offers: []offer{{0, "a", "m", true}, {0, "b", "m", false}, {0, "b", "m", false}, {0, "c", "m", false}},
			flush:  flush{at: 0, next: time.Second},
		},
		{
			name: "tokens come back: the held go oldest first", rate: 1, burst: 2,
			offers: []offer{{0, "a", "m", true}, {0, "b", "m", true}, {0, "c", "m1", false}, {0, "d", "m", false}, {0, "c", "m1", false}},
			flush:  flush{at: 2 * time.Second, want: []string{"c:2:m1", "d:1:m"}, next: -1},
		},
		{
			name: "a later reason supersedes the held one", rate: 1, burst: 1,
			offers: []offer{{0, "a", "m", true}, {0, "b", "0/1 nodes", false}, {0, "b", "0/2 nodes", false}},
			flush:  flush{at: time.Second, want: []string{"b:1:0/2 nodes"}, next: -1},
		},
		{
			name: "while some are held, a new occurrence waits its turn even with a token", rate: 1, burst: 1,
			offers: []offer{{0, "a", "m", true}, {0, "b", "m", false}, {time.Second, "c", "m", false}},
			flush:  flush{at: time.Second, want: []string{"b:1:m"}, next: 2 * time.Second},
		},
		{
			name: "a pod bound or deleted takes its held occurrence with it", rate: 1, burst: 1,
			offers: []offer{{0, "a", "m", true}, {0, "b", "m", false}, {0, "c", "m", false}},
			drop:   "default/b",
			flush:  flush{at: time.Second, want: []string{"c:1:m"}, next: -1},
		},
		{
			name: "the bucket holds no more than the burst", rate: 100, burst: 2,
			offers: []offer{{time.Hour, "a", "m", true}, {time.Hour, "b", "m", true}, {time.Hour, "c", "m", false}},
			flush:  flush{at: time.Hour, next: time.Hour + 10*time.Millisecond},
		},
		{
			name: "past maxHeld droppable occurrences held, another is dropped; FailedScheduling never is", rate: 1, burst: 1,
			offers:  []offer{{0, "a", "", true}, {0, "b", "", false}, {0, "c", "", false}, {0, "d", "", false}, {0, "e", "m", false}, {0, "b", "", false}},
			dropped: 1,
			flush:   flush{at: time.Second, want: []string{"b\x00Scheduled:2:m"}, next: 2 * time.Second},
		},
		{
			name: "a written or dropped droppable occurrence makes room for another", rate: 1, burst: 1, maxHeld: 1,
			offers:  []offer{{0, "a", "m", true}, {0, "b", "", false}, {0, "c", "", false}, {0, "d", "m", false}},
			drop:    "default/b\x00Scheduled",
			dropped: 1,
			flush:   flush{at: time.Second, want: []string{"d:1:m"}, next: -1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			maxHeld := tc.maxHeld
			if maxHeld == 0 {
				maxHeld = 2
			}
			b := NewEventBudget(tc.rate, tc.burst, maxHeld)
			for i, o := range tc.offers {
				e := occurrence(o.pod, o.msg)
				if o.msg == "" {
					e = scheduled(o.pod)
				}
				e, sent := b.Offer(e, t0.Add(o.at))
				if sent != o.sent {
					t.Fatalf("offer %d (%s): sent = %v, want %v", i, o.pod, sent, o.sent)
				}
				if sent && (e.Count != 1 || !strings.HasPrefix(e.Key, "default/"+o.pod) || !e.At.Equal(t0.Add(o.at))) {
					t.Fatalf("offer %d: written %+v", i, e)
				}
			}
			if b.Dropped() != tc.dropped {
				t.Fatalf("dropped %d, want %d", b.Dropped(), tc.dropped)
			}
			if tc.drop != "" {
				b.Drop(tc.drop)
				if _, sent := b.Offer(scheduled("z"), t0); sent { // room again: held, not dropped
					t.Fatal("a droppable occurrence was written while others were held")
				}
				if b.Dropped() != tc.dropped {
					t.Fatalf("after a drop made room, dropped %d, want %d", b.Dropped(), tc.dropped)
				}
				b.Drop("default/z\x00Scheduled")
			}
			out, next := b.Flush(t0.Add(tc.flush.at))
			var got []string
			for _, e := range out {
				got = append(got, fmt.Sprintf("%s:%d:%s", e.Key[len("default/"):], e.Count, e.Message))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.flush.want) {
				t.Fatalf("flushed %v, want %v", got, tc.flush.want)
			}
			wantNext := time.Time{}
			if tc.flush.next >= 0 {
				wantNext = t0.Add(tc.flush.next)
			}
			if !next.Equal(wantNext) {
				t.Fatalf("next flush %v, want %v", next, wantNext)
			}
		})
	}
}

// TestEventBudgetBound: however many pods fail however often, the writes by time T
// are at most EventBurst + EventRate*T, each pod's writes at most its failures, and
// every pod's first occurrence is written within (pods-EventBurst)/EventRate seconds.
func TestEventBudgetBound(t *testing.T) {
	const pods = 2000
	b := NewEventBudget(EventRate, EventBurst, MaxHeldEvents)
	q := NewQueue()
	written := map[string]int{}
	failures := map[string]int{}
	total := 0
	for i := 0; i < pods; i++ {
		q.Add(fmt.Sprintf("default/p%04d", i))
	}
	var firstAll time.Duration = -1
	for ms := 0; ms <= 120_000; ms += 100 {
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		q.RetryDue(now)
		for {
			key, ok := q.Pop()
			if !ok {
				break
			}
			q.Unschedulable(key, now)
			failures[key]++
			if e, sent := b.Offer(HeldEvent{Key: key, Reason: "FailedScheduling", Message: "no nodes"}, now); sent {
				written[e.Key]++
				total++
			}
		}
		out, _ := b.Flush(now)
		for _, e := range out {
			written[e.Key]++
			total++
		}
		if limit := EventBurst + EventRate*float64(ms)/1000; float64(total) > limit {
			t.Fatalf("at %d ms: %d writes, more than %g", ms, total, limit)
		}
		if firstAll < 0 && len(written) == pods {
			firstAll = time.Duration(ms) * time.Millisecond
		}
	}
	for key, n := range written {
		if n > failures[key] {
			t.Fatalf("%s: %d writes for %d failures", key, n, failures[key])
		}
	}
	if want := time.Duration(float64(pods-EventBurst)/EventRate*float64(time.Second)) + 100*time.Millisecond; firstAll < 0 || firstAll > want {
		t.Fatalf("every pod had its first event after %v, want within %v", firstAll, want)
	}
}
