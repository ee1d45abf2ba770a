package gateway

import (
	"github.com/labstack/echo/v4"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeactor/kubeactor/persistence"
)

// connect runs the admission chain with operation Connect before next serves a
// connection to a subresource (exec, attach, portforward, proxy): there is no actor
// for it, so the gateway asks. Logs are reads and pass.
func (s *Server) connect(next op) op {
	return func(c echo.Context, rq *request) error {
		if rq.sub != "log" {
			if err := s.admitConnect(c, rq.res.Name, rq.namespace, rq.name, rq.sub); err != nil {
				return err
			}
		}
		return next(c, rq)
	}
}

// connectLegacy is connect for the legacy /api/v1/proxy/... routes.
func (s *Server) connectLegacy(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if lp, ok := parseLegacyProxy(c.Param("*")); ok {
			if err := s.admitConnect(c, lp.resource, lp.namespace, lp.name, "proxy"); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// admitConnect admits a connection to sub of the object name ([scheme:]name[:port]
// for proxy).
func (s *Server) admitConnect(c echo.Context, resource, namespace, name, sub string) error {
	if _, n, _, ok := utilnet.SplitSchemeNamePort(name); ok {
		name = n
	}
	sys, err := s.system()
	if err != nil {
		return err
	}
	return sys.AdmitConnect(c.Request().Context(), persistence.Key{Resource: resource, Namespace: namespace, Name: name}, sub)
}
