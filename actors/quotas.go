package actors

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/resourcequota"
	"github.com/kubeactor/kubeactor/persistence"
)

// Quotas is the ResourceQuota admission plugin's way to the quotas' actors
// (admission.QuotaCharger): a create is charged to each quota of its namespace by a
// request to that quota's actor, the only writer of its usage, which charges one
// create at a time and answers once the new status.used is durable (or refuses).
// The requesting object's actor waits for the answer (up to the request timeout);
// that cannot deadlock, since a quota's actor never waits on another actor.
//
// The admission chain is made before the System it runs in, so a Quotas is made
// unbound (NewQuotas, inside admission.NewResourceQuota) and Start binds the Quotas
// of every ResourceQuota plugin of Options.Admission to the system it starts.
type Quotas struct {
	env atomic.Pointer[env]
}

var _ admission.QuotaCharger = (*Quotas)(nil)

// NewQuotas returns a charger to give admission.NewResourceQuota; Start binds it.
func NewQuotas() *Quotas { return &Quotas{} }

// NewResourceQuota returns the ResourceQuota admission plugin charging through a new
// Quotas, which the System started with it in Options.Admission binds.
func NewResourceQuota() *admission.ResourceQuota { return admission.NewResourceQuota(NewQuotas()) }

// errUnbound: a ResourceQuota plugin used outside the System whose chain it is in.
var errUnbound = errors.New("actors: resource quota charger not bound to a running system")

// bindQuotas binds the Quotas of the chain's ResourceQuota plugins to e.
func bindQuotas(chain admission.Chain, e *env) {
	for _, p := range chain {
		if rq, ok := p.(*admission.ResourceQuota); ok {
			if q, ok := rq.Charger().(*Quotas); ok {
				q.env.Store(e)
			}
		}
	}
}

// Charge asks each quota of namespace, in name order, to charge the create of obj.
// A refusal after an earlier quota charged leaves that quota's usage too high until
// its charge expires (resourcequota.ChargeTTL) and it recounts.
func (q *Quotas) Charge(namespace, resource string, obj runtime.Object, dryRun bool) error {
	e := q.env.Load()
	if e == nil {
		return errUnbound
	}
	var keys []persistence.Key
	e.store.AscendCurrent("resourcequotas", namespace, func(it *persistence.Item) bool {
		keys = append(keys, it.Key)
		return true
	})
	if len(keys) == 0 {
		return nil
	}
	pid, ok := e.managers["resourcequotas"]
	if !ok {
		return nil // a system without quota actors (tests) enforces none
	}
	for _, k := range keys {
		msg := &kindRequest{envelope: envelope{key: k}, payload: resourcequota.ChargeRequest{Resource: resource, Object: obj, DryRun: dryRun}}
		res, err := e.root.RequestFuture(pid, msg, e.requestTimeout).Result()
		switch {
		case errors.Is(err, actor.ErrTimeout):
			return fmt.Errorf("charge quota %s/%s: %w after %s", k.Namespace, k.Name, ErrTimeout, e.requestTimeout)
		case err != nil:
			return fmt.Errorf("charge quota %s/%s: %w", k.Namespace, k.Name, err)
		}
		if res, err = fromWire(res); err != nil { // the answer of a quota on another member
			return fmt.Errorf("charge quota %s/%s: %w", k.Namespace, k.Name, err)
		}
		if r, ok := res.(*kindReply); ok && r.err != nil {
			return r.err
		}
	}
	return nil
}
