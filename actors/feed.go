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
		for _, ev := range evs {
			for _, r := range f.routes {
				f.resync(r(f.env, ev))
			}
		}
	})
	if err != nil {
		f.env.log.WithFields(logrus.Fields{"resource": f.resource, "error": err}).Error("feed watch")
	}
}

func (f *feed) resync(keys []persistence.Key) {
	for _, k := range keys {
		if pid, ok := f.env.managers[k.Resource]; ok {
			f.env.root.Send(pid, &resyncRequest{envelope: envelope{key: k}})
		}
	}
}
