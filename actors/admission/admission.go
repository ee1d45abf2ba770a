package admission

import "k8s.io/apimachinery/pkg/runtime"

// Operation is what a write does.
type Operation string

// The operations a plugin is asked about.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT" // exec, attach, portforward and proxy
)

// User is who asked for a write. The control plane's own writes (a controller's pods,
// endpoints, events, bindings) have the zero User.
type User struct {
	Name   string
	Groups []string
}

// Anonymous is the user of a request that did not authenticate (today, every request).
var Anonymous = User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}

// Attributes describe one write for the plugins.
type Attributes struct {
	Operation   Operation
	Resource    string // plural, e.g. "pods"
	Subresource string // e.g. "status", "binding", "exec"; "" for the object itself
	Namespace   string // "" for a cluster-scoped resource
	Name        string
	// Object is the new object of a create or update, prepared and validated; a
	// plugin may change it (in place, or by setting another). Nil for delete and
	// connect.
	Object runtime.Object
	// OldObject is the current object of an update or delete (nil when there is none).
	// It is shared with the store: never change it.
	OldObject runtime.Object
	User      User
	DryRun    bool // nothing will be persisted; plugins must not act on the outside world
}

// Plugin admits or refuses writes. Its error is the write's answer, as the client
// should see it (an apierrors.StatusError: 403 Forbidden, 404 NotFound, 422
// Invalid...); any other error answers 500.
type Plugin interface {
	Name() string
	Admit(a *Attributes) error
}

// Chain runs plugins in order; the first refusal is the answer.
type Chain []Plugin

// Admit runs every plugin on a until one refuses.
func (c Chain) Admit(a *Attributes) error {
	for _, p := range c {
		if err := p.Admit(a); err != nil {
			return err
		}
	}
	return nil
}
