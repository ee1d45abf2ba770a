package actors

import (
	"slices"
	"testing"

	"github.com/kubeactor/kubeactor/persistence"
)

// TestFeedKeysOncePerBatch: a batch of changes asks each actor the routes name to
// look again once, in the order the routes first named it.
func TestFeedKeysOncePerBatch(t *testing.T) {
	rc := func(name string) persistence.Key {
		return persistence.Key{Resource: "replicationcontrollers", Namespace: "ns", Name: name}
	}
	ev := func(pod string) persistence.Event {
		return persistence.Event{Type: persistence.Added, Item: &persistence.Item{Key: persistence.Key{Resource: "pods", Namespace: "ns", Name: pod}}}
	}
	owner := func(_ *env, e persistence.Event) []persistence.Key { // a-1 → RC a
		return []persistence.Key{rc(e.Item.Key.Name[:1])}
	}
	both := func(_ *env, e persistence.Event) []persistence.Key { // every pod → RCs z and a
		return []persistence.Key{rc("z"), rc("a")}
	}
	none := func(*env, persistence.Event) []persistence.Key { return nil }
	tests := []struct {
		name   string
		routes []route
		evs    []persistence.Event
		want   []persistence.Key
	}{
		{name: "no events", routes: []route{owner}},
		{name: "no route names anyone", routes: []route{none}, evs: []persistence.Event{ev("a-1")}},
		{name: "one change", routes: []route{owner}, evs: []persistence.Event{ev("a-1")}, want: []persistence.Key{rc("a")}},
		{name: "many pods of two RCs", routes: []route{owner},
			evs:  []persistence.Event{ev("b-1"), ev("a-1"), ev("b-2"), ev("a-2"), ev("b-1")},
			want: []persistence.Key{rc("b"), rc("a")}},
		{name: "routes naming the same keys", routes: []route{owner, both, none},
			evs:  []persistence.Event{ev("c-1"), ev("a-1"), ev("c-2")},
			want: []persistence.Key{rc("c"), rc("z"), rc("a")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &feed{routes: tt.routes}
			if got := f.keys(tt.evs); !slices.Equal(got, tt.want) {
				t.Fatalf("keys = %v, want %v", got, tt.want)
			}
		})
	}
}
