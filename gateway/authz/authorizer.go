package authz

import (
	"fmt"
	"strconv"
	"strings"
)

// Authorizer decides one request. A denial comes with the reason to show the user.
type Authorizer interface {
	Authorize(a Attributes) (allowed bool, reason string)
}

// The --authorization-mode values.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeABAC        = "ABAC"
)

// AlwaysAllow allows everything (the default).
type AlwaysAllow struct{}

// Authorize implements Authorizer.
func (AlwaysAllow) Authorize(Attributes) (bool, string) { return true, "" }

// AlwaysDeny denies everything (for tests).
type AlwaysDeny struct{}

// Authorize implements Authorizer.
func (AlwaysDeny) Authorize(Attributes) (bool, string) { return false, "everything is denied" }

var (
	_ Authorizer = AlwaysAllow{}
	_ Authorizer = AlwaysDeny{}
	_ Authorizer = Policy(nil)
)

// New builds the authorizer of --authorization-mode; policy is the content of
// --authorization-policy-file, required for ABAC only.
func New(mode string, policy []byte) (Authorizer, error) {
	switch mode {
	case "", ModeAlwaysAllow:
		return AlwaysAllow{}, nil
	case ModeAlwaysDeny:
		return AlwaysDeny{}, nil
	case ModeABAC:
		if policy == nil {
			return nil, fmt.Errorf("authz: ABAC needs --authorization-policy-file")
		}
		return ParsePolicy(policy)
	default:
		return nil, fmt.Errorf("authz: unknown authorization mode %q (AlwaysAllow, AlwaysDeny or ABAC)", mode)
	}
}

// Forbidden is the message of a 403, as today's kubectl shows it:
// User "bob" cannot list resource "pods" in API group "" in the namespace "default".
func Forbidden(a Attributes) string {
	user := strconv.Quote(a.User)
	if a.Resource == "" {
		return fmt.Sprintf("User %s cannot %s path %s", user, a.Verb, strconv.Quote(a.Path))
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	scope := "at the cluster scope"
	if a.Namespace != "" {
		scope = "in the namespace " + strconv.Quote(a.Namespace)
	}
	return strings.Join([]string{"User", user, "cannot", a.Verb, "resource", strconv.Quote(res), `in API group ""`, scope}, " ")
}
