package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/kubeactor/kubeactor/persistence"
)

// testHook handles the requests that tests send an object's actor: a panic to
// exercise supervision, and a probe of its bookkeeping.
func (a *objectActor) testHook(ctx actor.Context, msg any) {
	switch msg := msg.(type) {
	case *panicRequest:
		a.begin(msg.trace)
		if a.obj == nil {
			a.answer(ctx, nil, false, fmt.Errorf("inject panic: %w", persistence.ErrNotFound))
			a.settle(ctx)
			return
		}
		ctx.Respond(&reply{object: a.obj})
		panic(fmt.Sprintf("injected panic in %s %s/%s", a.cell.key.Resource, a.cell.key.Namespace, a.cell.key.Name))
	case *probeRequest:
		a.begin(msg.trace)
		ctx.Respond(&probeReply{self: a, pid: ctx.Self(), revision: a.rev, handled: a.cell.handled, restarts: a.cell.restarts})
		a.settle(ctx)
	}
}
