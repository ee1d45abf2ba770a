package node

import (
	"math"
	"time"
)

// Limiter is a token bucket as a value: QPS tokens are added per second up to Burst,
// and taking one returns the bucket that remains. The zero Tokens and Last of a new
// bucket mean full: NewLimiter fills it.
type Limiter struct {
	QPS    float64   `json:"qps"`
	Burst  int       `json:"burst"`
	Tokens float64   `json:"tokens"`
	Last   time.Time `json:"last"` // when Tokens was computed
}

// NewLimiter returns a full bucket at now.
func NewLimiter(qps float64, burst int, now time.Time) Limiter {
	return Limiter{QPS: qps, Burst: burst, Tokens: float64(burst), Last: now}
}

// refill returns the bucket at now. Time going backwards adds nothing.
func (l Limiter) refill(now time.Time) Limiter {
	if now.After(l.Last) {
		l.Tokens = math.Min(float64(l.Burst), l.Tokens+now.Sub(l.Last).Seconds()*l.QPS)
		l.Last = now
	}
	return l
}

// Take takes one token at now, reporting whether there was one.
func (l Limiter) Take(now time.Time) (Limiter, bool) {
	l = l.refill(now)
	if l.Tokens < 1 {
		return l, false
	}
	l.Tokens--
	return l, true
}

// Available is the earliest time from now at which a token can be taken; the zero
// time when the bucket never refills.
func (l Limiter) Available(now time.Time) time.Time {
	l = l.refill(now)
	if l.Tokens >= 1 {
		return now
	}
	if l.QPS <= 0 {
		return time.Time{}
	}
	wait := time.Duration(math.Ceil((1 - l.Tokens) / l.QPS * float64(time.Second)))
	return now.Add(wait)
}
