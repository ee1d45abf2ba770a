package sim

import "time"

// Stagger spreads the heartbeats of n nodes evenly over each period: node i is due
// i*period/n into every round, so the server sees a steady n/period writes per
// second instead of n writes at once.
type Stagger struct {
	Period time.Duration
	N      int
}

// Cursor is the next heartbeat to send: node Index in round Round.
type Cursor struct {
	Round int64
	Index int
}

// At is when c is due, as time since the schedule started.
func (s Stagger) At(c Cursor) time.Duration {
	return time.Duration(c.Round)*s.Period + time.Duration(int64(s.Period)*int64(c.Index)/int64(s.N))
}

// Due returns the nodes due at elapsed (time since the start), from c on, and the
// cursor after them. A schedule more than a round behind (a stopped process) skips
// the rounds it missed: each node is sent at most once per call.
func (s Stagger) Due(c Cursor, elapsed time.Duration) ([]int, Cursor) {
	if s.N <= 0 || s.Period <= 0 {
		return nil, c
	}
	if behind := elapsed - s.At(c); behind >= s.Period {
		c.Round += int64(behind / s.Period)
	}
	var due []int
	for len(due) < s.N && s.At(c) <= elapsed {
		due = append(due, c.Index)
		c.Index++
		if c.Index == s.N {
			c.Index = 0
			c.Round++
		}
	}
	return due, c
}
