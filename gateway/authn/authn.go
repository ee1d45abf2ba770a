package authn

import (
	"errors"
	"net/http"
)

// User is who a request is from.
type User struct {
	Name   string
	UID    string
	Groups []string
}

// Anonymous is the user of a request without credentials (v1.1's names).
var Anonymous = User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}

// ErrUnauthorized is returned when a request carries credentials that are wrong
// (unknown token, wrong password, untrusted certificate). It never names them.
var ErrUnauthorized = errors.New("authn: invalid credentials")

// Authenticator recognises one kind of credentials. It answers ok=false, err=nil when
// the request carries none of its kind, and ErrUnauthorized (wrapped) when it carries
// some that are wrong. Tokens, basic auth and client certificates implement it; a
// service-account JWT authenticator is one more.
type Authenticator interface {
	Authenticate(r *http.Request) (u User, ok bool, err error)
}

// Union tries its members in order: the first that recognises the request wins.
// When none does, it returns the first error (credentials present but wrong), or,
// with no credentials at all, Anonymous if AllowAnonymous, ErrUnauthorized otherwise.
type Union struct {
	Members        []Authenticator
	AllowAnonymous bool
}

// Challenge is the WWW-Authenticate header of a 401 when a member takes passwords
// (--basic-auth-file), as kube-apiserver sends it so that a browser asks for them;
// "" otherwise.
func (u Union) Challenge() string {
	for _, m := range u.Members {
		if _, ok := m.(*BasicFile); ok {
			return `Basic realm="kubernetes-master"`
		}
	}
	return ""
}

// Authenticate implements the union.
func (u Union) Authenticate(r *http.Request) (User, error) {
	var first error
	for _, m := range u.Members {
		user, ok, err := m.Authenticate(r)
		if ok {
			return user, nil
		}
		if err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return User{}, first
	}
	if u.AllowAnonymous {
		return Anonymous, nil
	}
	return User{}, ErrUnauthorized
}
