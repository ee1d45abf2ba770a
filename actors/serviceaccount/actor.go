package serviceaccount

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/control"
	"github.com/kubeactor/kubeactor/actors/namespace"
)

// TokenGenerator signs the token of an account's secret (the server's JWT signer,
// over --service-account-private-key-file). The secret carries its name and
// namespace.
type TokenGenerator interface {
	GenerateToken(sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error)
}

// Options are the token controller's: the signer (nil: no tokens are made, as
// Kubernetes 1.0 ran no token controller without a key) and the CA put in every
// token secret as ca.crt (nil: none).
type Options struct {
	Tokens TokenGenerator
	RootCA []byte
}

// Controller is an account's token controller (control.Controller): it keeps one
// token secret for the account, lists its token secrets in .secrets and deletes them
// with the account. The feeds wake it when one of its token secrets changes.
type Controller struct {
	control.Base
	opts    *Options
	retryAt time.Time // after a refused write, nothing is tried again before it
}

// RetryInterval is how long a controller waits after one of its writes was refused
// (by admission, a quota, a conflict) before it tries again.
const RetryInterval = 5 * time.Second

var _ control.Controller = (*Controller)(nil)

// NewController returns the controller of one account.
func NewController(opts *Options) control.Controller { return &Controller{opts: opts} }

func secretsOf(fx control.Effects, ns string) []*corev1.Secret {
	var out []*corev1.Secret
	fx.Each("secrets", ns, func(obj runtime.Object) bool {
		if s, ok := obj.(*corev1.Secret); ok {
			out = append(out, s)
		}
		return true
	})
	return out
}

func (c *Controller) plan(fx control.Effects) (*corev1.ServiceAccount, Plan, bool) {
	sa, ok := fx.Object().(*corev1.ServiceAccount)
	if !ok || c.opts == nil || c.opts.Tokens == nil || !fx.Serves("secrets") || fx.Outstanding() > 0 ||
		fx.Now().Before(c.retryAt) {
		return nil, Plan{}, false
	}
	return sa, Decide(sa, secretsOf(fx, sa.Namespace)), true
}

// Settle queues a sync when the account's secrets are not as they should be; while
// its own writes are unanswered it waits for them.
func (c *Controller) Settle(fx control.Effects) {
	if _, p, ok := c.plan(fx); ok && !p.Empty() {
		fx.QueueSync()
	}
}

// Sync carries the plan out: the account's .secrets first (its own write), then the
// secrets' creates, fills and deletes, whose answers settle it again.
func (c *Controller) Sync(fx control.Effects) {
	sa, p, ok := c.plan(fx)
	if !ok || p.Empty() {
		return
	}
	log := fx.Log()
	if p.Changed {
		next := sa.DeepCopy()
		next.Secrets = p.Secrets
		if err := fx.Write(next); err != nil {
			log.WithField("error", err).Warn("write service account secrets")
			c.retryLater(fx)
			return
		}
		sa = next
	}
	for _, name := range p.Delete {
		fx.Delete(control.Ref{Resource: "secrets", Namespace: sa.Namespace, Name: name}, false)
	}
	for _, s := range p.Fill {
		next := s.DeepCopy()
		next.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
		Complete(next, c.opts.RootCA)
		token, err := c.opts.Tokens.GenerateToken(sa, next)
		if err != nil {
			log.WithField("error", err).Error("generate service account token")
			continue
		}
		next.Data[corev1.ServiceAccountTokenKey] = []byte(token)
		if err := fx.Update("secrets", s, next); err != nil {
			log.WithField("error", err).Warn("fill service account token")
		}
	}
	if p.CreateToken {
		s := TokenSecret(sa, TokenNamePrefix(sa.Name)+suffix(), c.opts.RootCA)
		token, err := c.opts.Tokens.GenerateToken(sa, s)
		if err != nil {
			log.WithField("error", err).Error("generate service account token")
			return
		}
		s.Data[corev1.ServiceAccountTokenKey] = []byte(token)
		if err := fx.Create("secrets", s); err != nil {
			log.WithField("error", err).Warn("create service account token")
		}
	}
}

// Answered looks again once the writes are answered (a refused create is retried on
// the next change or resync).
func (c *Controller) Answered(fx control.Effects, a control.Answer) {
	if a.Err != nil {
		fx.Log().WithField("error", a.Err).Warn("service account token write")
		c.retryLater(fx)
	}
}

func (c *Controller) retryLater(fx control.Effects) {
	c.retryAt = fx.Now().Add(RetryInterval)
	fx.SyncAt(c.retryAt)
}

// Deleted deletes the account's token secrets.
func (c *Controller) Deleted(fx control.Effects, last runtime.Object) {
	sa, ok := last.(*corev1.ServiceAccount)
	if !ok || !fx.Serves("secrets") {
		return
	}
	for _, name := range Owned(sa, secretsOf(fx, sa.Namespace)) {
		fx.Delete(control.Ref{Resource: "secrets", Namespace: sa.Namespace, Name: name}, true)
	}
}

// suffix is the random part of a generated token secret's name (five hex digits, as
// v1.0's five random characters).
func suffix() string {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("serviceaccount: random: %v", err))
	}
	return hex.EncodeToString(b[:])[:5]
}

// NamespaceController is a namespace's controller with the service-account
// controller's part: while the namespace is active it has a "default" account,
// created when missing (the feeds wake it when that account is deleted).
type NamespaceController struct {
	*namespace.Controller
	creating bool      // a create of the default account is unanswered
	retryAt  time.Time // after a refused create, none is tried before it
}

var (
	_ control.Controller = (*NamespaceController)(nil)
	_ control.Deleter    = (*NamespaceController)(nil)
	_ control.Holder     = (*NamespaceController)(nil)
)

// NewNamespaceController returns the controller of one namespace.
func NewNamespaceController() control.Controller {
	return &NamespaceController{Controller: namespace.NewController().(*namespace.Controller)}
}

// Settle drives termination, then creates the default account when it is missing.
func (c *NamespaceController) Settle(fx control.Effects) {
	c.Controller.Settle(fx)
	ns, ok := fx.Object().(*corev1.Namespace)
	if !ok || c.creating || !fx.Serves("serviceaccounts") || fx.Now().Before(c.retryAt) {
		return
	}
	existing, _ := fx.Get(control.Ref{Resource: "serviceaccounts", Namespace: ns.Name, Name: DefaultName}).(*corev1.ServiceAccount)
	if !NeedsDefault(ns, existing) {
		return
	}
	if err := fx.Create("serviceaccounts", Default(ns.Name)); err != nil {
		fx.Log().WithField("error", err).Warn("create default service account")
		return
	}
	c.creating = true
}

// Answered notes the answer to the default account's create.
func (c *NamespaceController) Answered(fx control.Effects, a control.Answer) {
	if a.Ref.Resource == "serviceaccounts" {
		c.creating = false
		if a.Err != nil {
			fx.Log().WithField("error", a.Err).Debug("create default service account")
			if ns, ok := fx.Object().(*corev1.Namespace); ok && ns.DeletionTimestamp == nil {
				c.retryAt = fx.Now().Add(RetryInterval)
				fx.SyncAt(c.retryAt)
			}
		}
		return
	}
	c.Controller.Answered(fx, a)
}
