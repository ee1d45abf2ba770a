package actors

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/lifecycle"
	"github.com/kubeactor/kubeactor/persistence"
)

// Admission runs in the owning object's actor, as the first step of every create,
// update and delete request it handles, with its current state as the old object:
// the API's writes and the controllers' writes (an RC's pods, a service's endpoints,
// the scheduler's bindings) take the same Options.Admission chain. Connect has no
// actor: the gateway asks AdmitConnect.

// DefaultAdmission is the server's default chain (admission.DefaultPlugins) over st,
// privileged containers allowed: NamespaceLifecycle with the bootstrap namespaces
// immortal, then ResourceQuota, charging through the quotas' actors of the System it
// is given to.
func DefaultAdmission(st *persistence.Store) admission.Chain {
	a, err := NewAdmission(st, AdmissionConfig{Plugins: admission.DefaultPlugins, AllowPrivileged: true})
	if err != nil {
		panic(err) // cannot happen: the default names known plugins (TestDefaultPlugins)
	}
	return a.Chain
}

// AdmissionConfig is the server's admission: the --admission-control plugins in
// order, and --allow-privileged.
type AdmissionConfig struct {
	Plugins         []string
	AllowPrivileged bool
}

// Admission is a chain built by name over the store (NewAdmission). Its
// NamespaceAutoProvision creates namespaces through the System given to Bind.
type Admission struct {
	Chain   admission.Chain
	creator *namespaceCreator
}

// NewAdmission builds cfg's chain over st: PrivilegedPolicy first unless privileged
// containers are allowed, then the named plugins in order, reading the store's cache.
// An unknown plugin name is an error naming the known ones.
func NewAdmission(st *persistence.Store, cfg AdmissionConfig) (*Admission, error) {
	creator := &namespaceCreator{}
	chain, err := admission.New(cfg.Plugins, admission.Env{
		Namespaces: storeNamespaces{st}, NamespaceCreator: creator, Pods: storePods{st},
		LimitRanges: storeLimitRanges{st}, Quotas: NewQuotas(), Immortal: kinds.BootstrapNamespaces,
		ServiceAccounts: StoreAccounts{st},
	})
	if err != nil {
		return nil, err
	}
	if !cfg.AllowPrivileged {
		chain = append(admission.Chain{admission.PrivilegedPolicy{}}, chain...)
	}
	return &Admission{Chain: chain, creator: creator}, nil
}

// Bind gives the chain the started system whose actors create the namespaces
// NamespaceAutoProvision provisions; until then such creates are refused.
func (a *Admission) Bind(s *System) { a.creator.sys.Store(s) }

// namespaceCreator creates a namespace by asking its actor, as the control plane,
// from the actor of the object being admitted: a different actor, asked with the
// system's request timeout, so the asking actor waits but never deadlocks.
type namespaceCreator struct{ sys atomic.Pointer[System] }

func (c *namespaceCreator) CreateNamespace(name string) error {
	s := c.sys.Load()
	if s == nil {
		return errors.New("actors: namespaces cannot be created before the system is started")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := prepareNew("namespaces", ns, s.env.now()); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	_, err := s.Create(ctx, persistence.Key{Resource: "namespaces", Name: name}, ns)
	if errors.Is(err, persistence.ErrAlreadyExists) || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// storePods reads pods from the store's cache.
type storePods struct{ st *persistence.Store }

func (s storePods) Pod(namespace, name string) (*corev1.Pod, bool, error) {
	return storeGet[*corev1.Pod](s.st, persistence.Key{Resource: "pods", Namespace: namespace, Name: name})
}

// StoreAccounts reads service accounts and secrets from the store's cache (the
// ServiceAccount plugin's reader, and the service-account token authenticator's).
type StoreAccounts struct{ Store *persistence.Store }

// ServiceAccount returns the account namespace/name.
func (s StoreAccounts) ServiceAccount(namespace, name string) (*corev1.ServiceAccount, bool, error) {
	return storeGet[*corev1.ServiceAccount](s.Store, persistence.Key{Resource: "serviceaccounts", Namespace: namespace, Name: name})
}

// Secret returns the secret namespace/name.
func (s StoreAccounts) Secret(namespace, name string) (*corev1.Secret, bool, error) {
	return storeGet[*corev1.Secret](s.Store, persistence.Key{Resource: "secrets", Namespace: namespace, Name: name})
}

// storeLimitRanges reads a namespace's LimitRanges from the store's cache.
type storeLimitRanges struct{ st *persistence.Store }

func (s storeLimitRanges) LimitRanges(namespace string) ([]*corev1.LimitRange, error) {
	var (
		out []*corev1.LimitRange
		err error
	)
	s.st.AscendCurrent("limitranges", namespace, func(it *persistence.Item) bool {
		lr, ok := it.Object().(*corev1.LimitRange)
		if !ok {
			err = fmt.Errorf("limitrange %s is a %T", namespace, it.Object())
			return false
		}
		out = append(out, lr)
		return true
	})
	return out, err
}

// storeNamespaces reads namespaces from the store's cache.
type storeNamespaces struct{ st *persistence.Store }

func (s storeNamespaces) Namespace(name string) (*corev1.Namespace, bool, error) {
	return storeGet[*corev1.Namespace](s.st, persistence.Key{Resource: "namespaces", Name: name})
}

// storeGet reads the object at key from the store's cache; found is false when
// there is none.
func storeGet[T runtime.Object](st *persistence.Store, key persistence.Key) (obj T, found bool, err error) {
	it, err := st.Get(key)
	if errors.Is(err, persistence.ErrNotFound) {
		return obj, false, nil
	}
	if err != nil {
		return obj, false, err
	}
	obj, ok := it.Object().(T)
	if !ok {
		return obj, false, fmt.Errorf("%s %s/%s is a %T", key.Resource, key.Namespace, key.Name, it.Object())
	}
	return obj, true, nil
}

// write is what a create, update or delete request carries for admission besides
// its object: who asked, for which subresource, and whether it is a dry run (admitted
// and decided, answered with the would-be object, never persisted).
type write struct {
	user      admission.User
	sub       string
	dryRun    bool
	bootstrap bool // the server's own bootstrap write: no plugin admits it
}

func writeOf(ctx context.Context) write {
	return write{user: UserOf(ctx), sub: subresourceOf(ctx), dryRun: dryRunIn(ctx), bootstrap: bootstrapIn(ctx)}
}

type (
	userKey        struct{}
	subresourceKey struct{}
	dryRunKey      struct{}
	bootstrapKey   struct{}
)

// WithBootstrap returns a context for the server's own bootstrap writes (its
// namespaces, the kubernetes and kube-dns services): the admission chain does not
// run for them, as Kubernetes 1.0 wrote them without admission, so a chain such as
// AlwaysDeny cannot keep the server from starting. Nothing else may use it.
func WithBootstrap(ctx context.Context) context.Context {
	return context.WithValue(ctx, bootstrapKey{}, true)
}

func bootstrapIn(ctx context.Context) bool {
	b, _ := ctx.Value(bootstrapKey{}).(bool)
	return b
}

// WithUser returns a context whose writes are made on behalf of u.
func WithUser(ctx context.Context, u admission.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserOf returns the user carried by ctx; the zero User (the control plane) if none.
func UserOf(ctx context.Context) admission.User {
	u, _ := ctx.Value(userKey{}).(admission.User)
	return u
}

// WithSubresource returns a context whose writes are to the subresource sub
// ("status", "binding", "finalize"...) of their object.
func WithSubresource(ctx context.Context, sub string) context.Context {
	return context.WithValue(ctx, subresourceKey{}, sub)
}

func subresourceOf(ctx context.Context) string {
	sub, _ := ctx.Value(subresourceKey{}).(string)
	return sub
}

// WithDryRun returns a context whose writes are dry runs: the object's actor admits
// and decides them as usual and answers what it would store, without storing it.
func WithDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, dryRunKey{}, true)
}

// dryRunIn tells whether ctx makes writes dry runs.
func dryRunIn(ctx context.Context) bool {
	dry, _ := ctx.Value(dryRunKey{}).(bool)
	return dry
}

// AdmitConnect runs the admission chain for a connection to a subresource of the
// object at key (exec, attach, portforward, proxy), on behalf of ctx's user.
func (s *System) AdmitConnect(ctx context.Context, key persistence.Key, sub string) error {
	return s.env.admission.Admit(&admission.Attributes{
		Operation: admission.Connect, Resource: key.Resource, Subresource: sub,
		Namespace: key.Namespace, Name: key.Name, User: UserOf(ctx),
	})
}

// admit runs the chain on a request for this actor's object, whose current state is
// the old object. It returns the object to go on with (a plugin may replace it).
func (a *objectActor) admit(op admission.Operation, w write, obj runtime.Object) (runtime.Object, error) {
	if len(a.env.admission) == 0 || w.bootstrap {
		return obj, nil
	}
	k := a.cell.key
	attrs := &admission.Attributes{
		Operation: op, Resource: k.Resource, Subresource: w.sub, Namespace: k.Namespace, Name: k.Name,
		Object: obj, OldObject: a.obj, User: w.user, DryRun: w.dryRun,
	}
	if err := a.env.admission.Admit(attrs); err != nil {
		return nil, err
	}
	return attrs.Object, nil
}

// admitCreate admits a create request, then decides it.
func (a *objectActor) admitCreate(msg *createRequest) (lifecycle.Plan, error) {
	obj, err := a.admit(admission.Create, msg.write, msg.object)
	if err != nil {
		return lifecycle.Plan{}, err
	}
	msg.object = obj
	return lifecycle.Create(a.obj, obj)
}

// admitUpdate admits an update request, then decides it.
func (a *objectActor) admitUpdate(msg *updateRequest) (lifecycle.Plan, error) {
	obj, err := a.admit(admission.Update, msg.write, msg.object)
	if err != nil {
		return lifecycle.Plan{}, err
	}
	msg.object = obj
	return lifecycle.Update(a.obj, a.rev, obj, msg.pre, a.holds(), a.env.now())
}

// admitDelete admits a delete request, then decides it.
func (a *objectActor) admitDelete(msg *deleteRequest) (lifecycle.Plan, error) {
	if _, err := a.admit(admission.Delete, msg.write, nil); err != nil {
		return lifecycle.Plan{}, err
	}
	return a.decideDelete(msg.opts)
}

// dryRun handles a dry-run create, update or delete: admitted and decided like the
// real request, answered with the would-be object (a delete: the current one), and
// never persisted. It reports whether the message was one.
func (a *objectActor) dryRun(ctx actor.Context) bool {
	var (
		trace string
		obj   runtime.Object
		err   error
	)
	switch msg := ctx.Message().(type) {
	case *createRequest:
		if !msg.dryRun {
			return false
		}
		trace = msg.trace
		var plan lifecycle.Plan
		if plan, err = a.admitCreate(msg); err == nil {
			obj = plan.Object
		}
	case *updateRequest:
		if !msg.dryRun {
			return false
		}
		trace = msg.trace
		if _, err = a.admitUpdate(msg); err == nil {
			obj = msg.object // the plan's object, or the last state of an update that deletes
		}
	case *deleteRequest:
		if !msg.dryRun {
			return false
		}
		trace = msg.trace
		if _, err = a.admitDelete(msg); err == nil {
			obj = a.obj
		}
	default:
		return false
	}
	a.begin(trace)
	a.answer(ctx, obj, false, err)
	a.settle(ctx)
	return true
}

// isDryRun tells whether a routed request is a dry run (the manager's extensions
// leave those alone: a dry run allocates nothing).
func isDryRun(msg routed) bool {
	switch r := msg.(type) {
	case *createRequest:
		return r.dryRun
	case *updateRequest:
		return r.dryRun
	case *deleteRequest:
		return r.dryRun
	}
	return false
}
