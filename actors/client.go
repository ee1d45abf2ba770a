package actors

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/persistence"
)

// CONTRACT STUB: the actors implementation replaces the bodies below; the exported
// names and signatures are what the gateway builds against.

// Options configure the actor system.
type Options struct {
	Store          *persistence.Store
	Log            logrus.FieldLogger
	RequestTimeout time.Duration    // how long a caller waits for an actor's reply; 0 means 30s
	Now            func() time.Time // clock; nil means time.Now
}

// Preconditions of a write, checked by the owning actor against the stored object.
type Preconditions struct {
	ResourceVersion int64
	UID             types.UID
}

// DeleteOptions mirror metav1.DeleteOptions as the actors need them.
type DeleteOptions struct {
	GracePeriodSeconds *int64
	Preconditions      Preconditions
	PropagationPolicy  string // Orphan, Background or Foreground; empty means the kind's default
}

// System is the running actor system.
type System struct{}

// Start loads every object from the store, spawns its actor and returns the system.
func Start(opts Options) (*System, error) { panic("unimplemented") }

// Stop stops every actor.
func (s *System) Stop() { panic("unimplemented") }

// Create asks the object's actor to persist a new, fully prepared object (name, uid,
// creationTimestamp set). It returns the stored object.
func (s *System) Create(ctx context.Context, key persistence.Key, obj runtime.Object) (runtime.Object, error) {
	panic("unimplemented")
}

// Update asks the object's actor to persist obj as the new state if pre holds.
func (s *System) Update(ctx context.Context, key persistence.Key, obj runtime.Object, pre Preconditions) (runtime.Object, error) {
	panic("unimplemented")
}

// Delete asks the object's actor to delete it. It returns the object's last state and
// whether it is gone (false when a grace period or finalizers keep it for now, in which
// case the returned object carries its deletionTimestamp).
func (s *System) Delete(ctx context.Context, key persistence.Key, opts DeleteOptions) (runtime.Object, bool, error) {
	panic("unimplemented")
}

type traceKey struct{}

// WithTrace returns a context carrying the trace id of the request that caused it.
func WithTrace(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// TraceID returns the trace id carried by ctx, or "".
func TraceID(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}
