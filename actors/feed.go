package actors

import (
	"context"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/persistence"
)

// A feed follows the store's change log for one resource and tells the actors that
// care about each change to look again (a resyncRequest to the owning kind's
// manager). The mapping from a change to the actors that care is a route function;
// routes read only the event and the store's current state.
type feed struct {
	env      *env
	resource string
	routes   []route
}

// route returns the keys of the objects whose actors must look again after ev.
type route func(e *env, ev persistence.Event) []persistence.Key

// run follows the change log from revision from until ctx ends. If it falls behind
// the log's window it tells every actor of the routes' kinds to look again (no event
// may be lost silently) and goes on from the current revision.
func (f *feed) run(ctx context.Context, from int64, everyone func() []persistence.Key) {
	err := f.env.store.Follow(ctx, f.resource, from, func(*persistence.Snapshot, bool) {
		f.env.log.WithField("resource", f.resource).Warn("feed fell behind: resyncing everything")
		f.resync(everyone())
	}, func(evs []persistence.Event) {
		f.resync(f.keys(evs))
	})
	if err != nil {
		f.env.log.WithFields(logrus.Fields{"resource": f.resource, "error": err}).Error("feed watch")
	}
}

// keys is every key the routes give for evs, each once, in the order first given: a
// resync asks an actor to look again at the store, so one per batch does for all the
// batch's changes of its object. An RC of 5,000 pods would otherwise be asked
// 15,000 times through its manager as its pods are created, bound and started.
func (f *feed) keys(evs []persistence.Event) []persistence.Key {
	var out []persistence.Key
	seen := make(map[persistence.Key]struct{})
	for _, ev := range evs {
		for _, r := range f.routes {
			for _, k := range r(f.env, ev) {
				if _, dup := seen[k]; !dup {
					seen[k] = struct{}{}
					out = append(out, k)
				}
			}
		}
	}
	return out
}

func (f *feed) resync(keys []persistence.Key) {
	for _, k := range keys {
		if pid, ok := f.env.managers[k.Resource]; ok {
			f.env.root.Send(pid, &resyncRequest{envelope: envelope{key: k}})
		}
	}
}
