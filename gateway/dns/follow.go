package dns

import (
	"context"

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
		sn := store.Snapshot(res)
		load(t, res, sn)
		go follow(ctx, store, t, log, res, sn.Revision())
	}
}

// load replaces the table's objects of resource with the snapshot's.
func load(t *Table, resource string, sn *persistence.Snapshot) {
	var svcs []*corev1.Service
	var eps []*corev1.Endpoints
	sn.Ascend("", "", func(it *persistence.Item) bool {
		switch o := it.Object().(type) {
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
}

func follow(ctx context.Context, store *persistence.Store, t *Table, log logrus.FieldLogger, resource string, from int64) {
	err := store.Follow(ctx, resource, from, func(sn *persistence.Snapshot, _ bool) {
		log.WithField("resource", resource).Warn("dns fell behind: reloading")
		load(t, resource, sn)
	}, func(evs []persistence.Event) {
		for _, ev := range evs {
			apply(t, ev)
		}
	})
	if err != nil {
		log.WithFields(logrus.Fields{"resource": resource, "error": err}).Error("dns follow")
	}
}

// apply records one change in the table.
func apply(t *Table, ev persistence.Event) {
	switch o := ev.Item.Object().(type) {
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
