package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/gateway/authn"
	"github.com/kubeactor/kubeactor/gateway/authz"
)

// secureKey marks a request that came in on the secure port.
type secureKey struct{}

// SecureHandler is the handler of the secure port: the same routes as Handler, each
// request authenticated (Config.Authenticator) and authorized (Config.Authorizer)
// first, and admitted as its user. Handler, the insecure port's, skips both, as in v1.0.
func (s *Server) SecureHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.echo.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), secureKey{}, true)))
	})
}

// guard authenticates and authorizes a secure-port request: 401 for credentials that
// are wrong or missing (when anonymous is refused), 403 for a request its user may
// not make. It runs after traceAndLog, whose anonymous user it replaces.
func (s *Server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if p, ok := peerOf(req); ok { // forwarded by a replica, which authenticated it
			if p.uid != "" {
				c.Set(uidKey, p.uid)
			}
			c.SetRequest(req.WithContext(actors.WithUser(req.Context(), admission.User{Name: p.name, Groups: p.groups})))
			return next(c)
		}
		if secure, _ := req.Context().Value(secureKey{}).(bool); !secure {
			return next(c)
		}
		u := authn.Anonymous
		if s.authn != nil {
			var err error
			if u, err = s.authn.Authenticate(req); err != nil {
				if !errors.Is(err, authn.ErrUnauthorized) {
					return err
				}
				if ch := s.authn.Challenge(); ch != "" {
					c.Response().Header().Set("WWW-Authenticate", ch)
				}
				return apierrors.NewUnauthorized("Unauthorized")
			}
		}
		if s.authz != nil {
			a := authz.FromRequest(u.Name, u.Groups, req.Method, req.URL.Path, req.URL.Query())
			if ok, _ := s.authz.Authorize(a); !ok {
				return forbidden(a)
			}
		}
		if u.UID != "" {
			c.Set(uidKey, u.UID)
		}
		c.SetRequest(req.WithContext(actors.WithUser(req.Context(), admission.User{Name: u.Name, Groups: u.Groups})))
		return next(c)
	}
}

// forbidden is the 403 of a denied request, worded as today's API server words it.
func forbidden(a authz.Attributes) error {
	gr := schema.GroupResource{Resource: a.Resource}
	if a.Subresource != "" {
		gr.Resource += "/" + a.Subresource
	}
	return apierrors.NewForbidden(gr, a.Name, errors.New(authz.Forbidden(a)))
}
