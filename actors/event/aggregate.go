package event

import "time"

// Combining of similar events, as Kubernetes' EventAggregator: within SimilarWindow
// of the last similar record, the first MaxSimilar-1 distinct messages are recorded
// as they are (repeats of them bump their own events); every further distinct
// message is combined into one event keyed without the message, whose message is
// CombinedPrefix and the latest message.
const (
	MaxSimilar     = 10
	SimilarWindow  = 10 * time.Minute
	CombinedPrefix = "(combined from similar events): "
	// maxTracked bounds the similar keys an Aggregator remembers; beyond it, keys
	// quiet for longer than SimilarWindow are forgotten.
	maxTracked = 4096
)

// Aggregator remembers, for one recorder, the distinct messages of similar records.
// The zero value is ready; it is not safe for concurrent use (one actor owns it).
type Aggregator struct {
	seen map[string]*similar
}

type similar struct {
	messages map[string]struct{}
	last     time.Time
}

// Observe notes r and returns the record to send: r itself, or r combined.
func (g *Aggregator) Observe(r Record) Record {
	if g.seen == nil {
		g.seen = make(map[string]*similar)
	}
	now := r.At.Time
	k := r.similarKey()
	s, ok := g.seen[k]
	if !ok || now.Sub(s.last) > SimilarWindow {
		if !ok && len(g.seen) >= maxTracked {
			g.forget(now)
		}
		s = &similar{messages: make(map[string]struct{})}
		g.seen[k] = s
	}
	if now.After(s.last) {
		s.last = now
	}
	if _, known := s.messages[r.Message]; known {
		return r
	}
	if len(s.messages) < MaxSimilar-1 {
		s.messages[r.Message] = struct{}{}
		return r
	}
	r.Combined = true
	r.Message = CombinedPrefix + r.Message
	return r
}

// Len is the number of similar keys remembered.
func (g *Aggregator) Len() int { return len(g.seen) }

// forget drops the keys quiet for longer than SimilarWindow.
func (g *Aggregator) forget(now time.Time) {
	for k, s := range g.seen {
		if now.Sub(s.last) > SimilarWindow {
			delete(g.seen, k)
		}
	}
}
