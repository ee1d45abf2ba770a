package sim

import (
	"slices"
	"testing"
	"time"
)

func TestStaggerAt(t *testing.T) {
	s := Stagger{Period: 10 * time.Second, N: 5000}
	tests := []struct {
		c    Cursor
		want time.Duration
	}{
		{Cursor{0, 0}, 0},
		{Cursor{0, 1}, 2 * time.Millisecond},
		{Cursor{0, 2500}, 5 * time.Second},
		{Cursor{0, 4999}, 9998 * time.Millisecond},
		{Cursor{3, 10}, 30*time.Second + 20*time.Millisecond},
	}
	for _, tt := range tests {
		if got := s.At(tt.c); got != tt.want {
			t.Errorf("At(%+v) = %s, want %s", tt.c, got, tt.want)
		}
	}
}

func TestStaggerDue(t *testing.T) {
	s := Stagger{Period: time.Second, N: 4} // nodes due at 0, 250ms, 500ms, 750ms
	tests := []struct {
		name     string
		from     Cursor
		elapsed  time.Duration
		wantDue  []int
		wantNext Cursor
	}{
		{"start", Cursor{}, 0, []int{0}, Cursor{0, 1}},
		{"nothing yet", Cursor{0, 1}, 249 * time.Millisecond, nil, Cursor{0, 1}},
		{"a batch", Cursor{0, 1}, 600 * time.Millisecond, []int{1, 2}, Cursor{0, 3}},
		{"into the next round", Cursor{0, 3}, 1100 * time.Millisecond, []int{3, 0}, Cursor{1, 1}},
		{"far behind skips rounds, each node once", Cursor{0, 2}, 5*time.Second + 300*time.Millisecond, []int{2, 3, 0, 1}, Cursor{5, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			due, next := s.Due(tt.from, tt.elapsed)
			if !slices.Equal(due, tt.wantDue) || next != tt.wantNext {
				t.Errorf("Due(%+v, %s) = %v, %+v; want %v, %+v", tt.from, tt.elapsed, due, next, tt.wantDue, tt.wantNext)
			}
		})
	}
}

// Walking a schedule in 10ms steps sends every node exactly once per round, and no
// 10ms window carries more than its share of the heartbeats (plus one).
func TestStaggerSpreadsEvenly(t *testing.T) {
	for _, n := range []int{1, 3, 100, 5000} {
		s := Stagger{Period: 10 * time.Second, N: n}
		const step = 10 * time.Millisecond
		perStep := n*int(step)/int(s.Period) + 1
		sent := make([]int, n)
		var c Cursor
		end := 3*s.Period - 1 // the last instant of the third round
		for elapsed := time.Duration(0); elapsed < end+step; elapsed += step {
			var due []int
			due, c = s.Due(c, min(elapsed, end))
			if len(due) > perStep {
				t.Fatalf("n=%d: %d heartbeats at %s, want at most %d", n, len(due), elapsed, perStep)
			}
			for _, i := range due {
				sent[i]++
			}
		}
		for i, k := range sent {
			if k != 3 {
				t.Fatalf("n=%d: node %d sent %d times in 3 rounds", n, i, k)
			}
		}
	}
}
