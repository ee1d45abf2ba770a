package dns

import (
	"context"
	"errors"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/persistence"
)

// Follow loads the stored services and endpoints into t, then keeps it up to date
// from the store's change feed in two goroutines until ctx ends. It returns once the
// first load is done, so that the table answers from the start. A follower that
// falls behind the change log's window reloads from a snapshot.
func Follow(ctx context.Context, store *persistence.Store, t *Table, log logrus.FieldLogger) {
	for _, res := range []string{"services", "endpoints"} {
		rev := load(store, t, res)
		go follow(ctx, store, t, log, res, rev)
	}
}

// load replaces the table's objects of resource with the store's current ones and
// returns the snapshot's revision.
func load(store *persistence.Store, t *Table, resource string) int64 {
	snap := store.Snapshot(resource)
	var svcs []*corev1.Service
	var eps []*corev1.Endpoints
	snap.Ascend("", "", func(it *persistence.Item) bool {
		switch o := it.Object.(type) {
		case *corev1.Service:
			svcs = append(svcs, o)
		case *corev1.Endpoints:
			eps = append(eps, o)
		}
		return true
	})
	if resource == "services" {
		t.ResetServices(svcs)
	} else {
		t.ResetEndpoints(eps)
	}
	return snap.Revision()
}

func follow(ctx context.Context, store *persistence.Store, t *Table, log logrus.FieldLogger, resource string, from int64) {
	for ctx.Err() == nil {
		w, err := store.Watch(ctx, resource, "", from)
		if errors.Is(err, persistence.ErrCompacted) {
			from = load(store, t, resource)
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				log.WithFields(logrus.Fields{"resource": resource, "error": err}).Error("dns follow")
			}
			return
		}
		for {
			evs, err := w.Next(ctx)
			if errors.Is(err, persistence.ErrCompacted) {
				log.WithField("resource", resource).Warn("dns fell behind: reloading")
				from = load(store, t, resource)
				break
			}
			if err != nil {
				return
			}
			for _, ev := range evs {
				apply(t, ev)
			}
		}
	}
}

// apply records one change in the table.
func apply(t *Table, ev persistence.Event) {
	switch o := ev.Item.Object.(type) {
	case *corev1.Service:
		if ev.Type == persistence.Deleted {
			t.DeleteService(o.Namespace, o.Name)
		} else {
			t.SetService(o)
		}
	case *corev1.Endpoints:
		if ev.Type == persistence.Deleted {
			t.DeleteEndpoints(o.Namespace, o.Name)
		} else {
			t.SetEndpoints(o)
		}
	}
}
