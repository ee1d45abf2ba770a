package actors

import "time"

// Clock is the system's time: the now that decisions read and the timers that wake
// actors (grace periods, requeues, the scheduler's backoff, the evictor's tokens).
// Tests give a clock they move by hand, and its timers fire as it moves. The pacing
// of syncs measures real cost and keeps the real clock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed on this clock.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a timer of a Clock.
type Timer interface {
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// RealClock is the wall clock.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
