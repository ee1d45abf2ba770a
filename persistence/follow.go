package persistence

import (
	"context"
	"errors"
)

// FromSnapshot is the from of a Follow that starts with a snapshot of the resource
// rather than after a revision the caller already has (any negative from does).
const FromSnapshot int64 = -1

// Follow follows every object of resource, in revision order, until ctx ends or the
// store closes. It calls its callbacks one at a time from the calling goroutine:
//
//   - snapshot(sn, behind) hands over the whole state at sn.Revision(); what follows
//     is the changes after it. With from = FromSnapshot Follow starts with one
//     (behind false); with from >= 0 it starts with the changes after revision from,
//     which the caller already has, and calls snapshot only once it falls behind.
//   - events(evs) hands over the next changes (never none).
//
// When the change log no longer holds the changes to deliver next (ErrCompacted: the
// follower, or from, fell behind the log's window), Follow calls snapshot again with
// a current snapshot and behind true, and goes on after it: no change is lost
// silently. It returns nil once ctx ends or the store is closed, and any other
// failure to watch.
func (s *Store) Follow(ctx context.Context, resource string, from int64,
	snapshot func(sn *Snapshot, behind bool), events func(evs []Event)) error {
	behind := false
	for ctx.Err() == nil {
		if from < 0 {
			sn := s.Snapshot(resource)
			snapshot(sn, behind)
			from = sn.Revision()
		}
		w, err := s.Watch(ctx, resource, "", from)
		for err == nil {
			var evs []Event
			if evs, err = w.Next(ctx); err == nil {
				events(evs)
			}
		}
		switch {
		case errors.Is(err, ErrCompacted):
			from, behind = FromSnapshot, true
		case ctx.Err() != nil, errors.Is(err, ErrClosed):
			return nil
		default:
			return err
		}
	}
	return nil
}
