package event

import (
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/actors/control"
)

// Controller is an event's controller (control.Controller). The event's actor is its
// only writer: recorders send it occurrences (Records), which it writes as a create
// with count 1 or a bump of count and lastTimestamp; the occurrences that arrive
// while it is busy are written together (one write per burst). It deletes the event
// once lastTimestamp is older than the TTL.
type Controller struct {
	control.Base
	ttl     time.Duration
	pending Pending
}

var (
	_ control.Controller = (*Controller)(nil)
	_ control.Receiver   = (*Controller)(nil)
)

// NewController returns the controller of one event, kept ttl after it was last seen.
func NewController(ttl time.Duration) control.Controller { return &Controller{ttl: ttl} }

// Receive notes one occurrence (a Record). The first one of an absent event is
// written at once (an actor without an object is stopped when idle); later ones wait
// for the sync queued behind the messages already in the mailbox.
// Nobody waits for an occurrence: it answers nil, nil.
func (c *Controller) Receive(fx control.Effects, msg any) (any, error) {
	r, ok := msg.(Record)
	if !ok {
		return nil, nil
	}
	c.pending.Add(r)
	if fx.Object() == nil {
		c.flush(fx)
		return nil, nil
	}
	fx.QueueSync()
	return nil, nil
}

// flush writes the collected occurrences as one create or bump. A failed write is
// logged and dropped: events are best effort.
func (c *Controller) flush(fx control.Effects) {
	if c.pending.Count == 0 {
		return
	}
	p := c.pending
	c.pending = Pending{}
	cur, _ := fx.Object().(*corev1.Event)
	next, _ := Next(cur, p)
	if err := fx.Write(next); err != nil {
		fx.Log().WithFields(logrus.Fields{"count": p.Count, "error": err}).Warn("write event")
	}
}

// Settle schedules the look at the event's expiry.
func (c *Controller) Settle(fx control.Effects) {
	e, ok := fx.Object().(*corev1.Event)
	if !ok {
		return
	}
	fx.SyncAt(Expiry(e, c.ttl))
}

// Sync writes the occurrences collected, then deletes the event once it has not been
// seen for the TTL.
func (c *Controller) Sync(fx control.Effects) {
	c.flush(fx)
	e, ok := fx.Object().(*corev1.Event)
	if !ok || fx.Now().Before(Expiry(e, c.ttl)) {
		return
	}
	if err := fx.Remove(); err != nil {
		fx.Log().WithField("error", err).Warn("expire event")
	}
}
