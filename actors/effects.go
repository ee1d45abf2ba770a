package actors

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel/attribute"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/control"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// effects is an object actor seen by its controller: what the controller may do and
// read (control.Effects). It is the actor itself under another type, so handing it
// out allocates nothing; it is valid while the actor handles a message.
type effects objectActor

var _ control.Effects = (*effects)(nil)

func (a *objectActor) effects() *effects { return (*effects)(a) }

func (fx *effects) actor() *objectActor { return (*objectActor)(fx) }

func keyOf(r control.Ref) persistence.Key {
	return persistence.Key{Resource: r.Resource, Namespace: r.Namespace, Name: r.Name}
}

func (fx *effects) Self() control.Ref {
	k := fx.cell.key
	return control.Ref{Resource: k.Resource, Namespace: k.Namespace, Name: k.Name}
}

func (fx *effects) Object() runtime.Object  { return fx.obj }
func (fx *effects) Revision() int64         { return fx.rev }
func (fx *effects) Now() time.Time          { return fx.env.now() }
func (fx *effects) Trace() string           { return fx.cell.trace }
func (fx *effects) Log() logrus.FieldLogger { return fx.actor().fields(fx.cell.trace) }
func (fx *effects) Outstanding() int        { return fx.outstanding }

func (fx *effects) Create(resource string, obj runtime.Object) error {
	if err := prepareNew(resource, obj, fx.env.now()); err != nil {
		return err
	}
	key, err := keyFor(resource, obj)
	if err != nil {
		return fmt.Errorf("create %s: %w", resource, err)
	}
	fx.creates++
	return fx.request(&createRequest{envelope: fx.actor().envelope(key), object: obj})
}

func (fx *effects) Update(resource string, cur, next runtime.Object) error {
	key, err := keyFor(resource, cur)
	if err != nil {
		return fmt.Errorf("update %s: %w", resource, err)
	}
	m, _ := meta.Accessor(cur) // keyFor checked
	rv, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return fmt.Errorf("update %s %s/%s: resourceVersion: %w", resource, key.Namespace, key.Name, err)
	}
	if r, ok := kinds.Lookup(resource); ok {
		if err := kinds.PrepareUpdate(r, kinds.UpdateMain, next, cur, rv); err != nil {
			return err
		}
	}
	return fx.request(&updateRequest{envelope: fx.actor().envelope(key), object: next,
		pre: command.Preconditions{UID: m.GetUID(), ResourceVersion: rv}})
}

// request sends a write to its object's actor (through the kind's manager); the
// answer comes back to the controller's Answered.
func (fx *effects) request(msg routed) error {
	pid, ok := fx.env.managers[msg.target().Resource]
	if !ok {
		return fmt.Errorf("%s: %w", msg.target().Resource, ErrUnknownResource)
	}
	fx.ctx.Request(pid, msg)
	fx.outstanding++
	if fx.outstanding == 1 {
		fx.actor().armOverdue(fx.ctx)
	}
	return nil
}

// keyFor is the key of obj, an object of resource.
func keyFor(resource string, obj runtime.Object) (persistence.Key, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return persistence.Key{}, err
	}
	return persistence.Key{Resource: resource, Namespace: m.GetNamespace(), Name: m.GetName()}, nil
}

func (fx *effects) Delete(ref control.Ref, noAnswer bool) {
	pid, ok := fx.env.managers[ref.Resource]
	if !ok {
		return
	}
	msg := &deleteRequest{envelope: fx.actor().envelope(keyOf(ref))}
	fx.deletes++
	if noAnswer {
		fx.ctx.Send(pid, msg)
		return
	}
	_ = fx.request(msg) // the manager exists
}

// Write persists the object's own new state: a create (prepared as any created
// object) when it is absent, otherwise an update against the state the actor holds.
func (fx *effects) Write(next runtime.Object) error {
	a := fx.actor()
	var plan lifecycle.Plan
	var err error
	if a.obj == nil {
		if err = prepareNew(a.cell.key.Resource, next, a.env.now()); err == nil {
			plan, err = a.admitCreate(&createRequest{object: next}) // admitted like a request (admit.go)
		}
	} else {
		plan, err = a.admitUpdate(&updateRequest{object: next})
	}
	if err == nil {
		err = a.apply(a.cell.trace, plan)
	}
	return err
}

func (fx *effects) Remove() error {
	a := fx.actor()
	a.stopTimer()
	return a.apply(a.cell.trace, lifecycle.Plan{Op: persistence.OpDelete, Gone: true})
}

func (fx *effects) QueueSync()              { fx.actor().queueSync(fx.ctx) }
func (fx *effects) QueueResync()            { fx.actor().queueResync(fx.ctx) }
func (fx *effects) SyncAt(t time.Time)      { fx.actor().syncAt(fx.ctx, t) }
func (fx *effects) Pace(cost time.Duration) { fx.actor().paceFor(cost) }

func (fx *effects) Record(involved runtime.Object, eventType, reason, message string) {
	fx.actor().syncSpan()
	fx.actor().record(fx.ctx, involved, eventType, reason, message)
}

func (fx *effects) Note(key string, value int) {
	fx.actor().syncSpan()
	if sp := fx.actor().span; sp != nil && sp.IsRecording() {
		sp.SetAttributes(attribute.Int(key, value))
	}
}

func (fx *effects) Serves(resource string) bool {
	_, ok := fx.env.managers[resource]
	return ok
}

func (fx *effects) Each(resource, namespace string, fn func(obj runtime.Object) bool) {
	fx.env.store.Snapshot(resource).Ascend(namespace, "", func(it *persistence.Item) bool { return fn(it.Object()) })
}

func (fx *effects) Related(resource, namespace string, uid types.UID, prefix string, fn func(obj runtime.Object) bool) {
	for _, it := range fx.env.store.Related(resource, namespace, uid, prefix) {
		if !fn(it.Object()) {
			return
		}
	}
}

func (fx *effects) Changed(resource string) int64 { return fx.env.store.Changed(resource) }

func (fx *effects) Get(ref control.Ref) runtime.Object {
	it, err := fx.env.store.Get(keyOf(ref))
	if err != nil {
		return nil
	}
	return it.Object()
}

func (fx *effects) Contents(ns string) ([]control.Ref, bool) {
	if fx.env.cluster != nil && !fx.env.leads() {
		// This replica's store may lag the leader's: an object created there just
		// before the namespace began terminating would be missed, and the namespace
		// removed with it still inside. Catch up with every committed write first.
		ctx, cancel := context.WithTimeout(context.Background(), fx.env.requestTimeout)
		err := fx.env.store.ReadBarrier(ctx)
		cancel()
		if err != nil {
			return nil, false
		}
	}
	var refs []control.Ref
	for _, k := range fx.env.contents(ns) {
		refs = append(refs, control.Ref{Resource: k.Resource, Namespace: k.Namespace, Name: k.Name})
	}
	return refs, true
}

func (fx *effects) Tell(name string, msg any) {
	fx.actor().syncSpan()
	if _, ok := singletonRoles[name]; !ok {
		fx.env.log.WithFields(logrus.Fields{"actor": name, "message": fmt.Sprintf("%T", msg)}).Warn("no such actor")
		return
	}
	pid := fx.env.supervisor // passes it to the singleton (system.go)
	if addr, here := fx.env.singletonAt(name); !here {
		if addr == "" {
			fx.env.log.WithFields(logrus.Fields{"actor": name, "message": fmt.Sprintf("%T", msg)}).
				Warn("the member that runs the singleton is not known: message dropped")
			return
		}
		pid, msg = actor.NewPID(addr, rootName), &singletonMsg{payload: msg}
	}
	fx.ctx.Send(pid, msg)
}
