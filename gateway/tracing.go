package gateway

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/tracing"
)

// Tracing: each request is a span, continuing the trace of a W3C traceparent header
// and returning its own traceparent; the actors continue it (actors/tracing.go).
// GET /kubeactor/v1/traces/{resource}[/{namespace}]/{name} answers the object's
// recent spans (tracing.Store.History) as JSON.

// TracesPath and ExplainPath prefix the troubleshooting paths.
const (
	TracesPath  = "/kubeactor/v1/traces"
	ExplainPath = "/kubeactor/v1/explain"
)

// startRequest starts the span of request c; the returned request carries it.
// It returns a nil span when tracing is off.
func (s *Server) startRequest(c echo.Context) (*http.Request, trace.Span) {
	if s.tracer == nil {
		return c.Request(), nil
	}
	req := c.Request()
	ctx := tracing.Propagator.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
	name := c.Path()
	if name == "" {
		name = req.URL.Path
	}
	ctx, sp := s.tracer.Start(ctx, req.Method+" "+name, trace.WithSpanKind(trace.SpanKindServer))
	if sp.IsRecording() {
		sp.SetAttributes(attribute.String("http.method", req.Method), attribute.String("http.target", req.URL.RequestURI()))
	}
	tracing.Propagator.Inject(ctx, propagation.HeaderCarrier(c.Response().Header()))
	return req.WithContext(ctx), sp
}

// endRequest ends the request's span.
func endRequest(sp trace.Span, status int) {
	if sp == nil {
		return
	}
	if sp.IsRecording() {
		sp.SetAttributes(attribute.Int("http.status_code", status))
	}
	sp.End()
}

// mountTroubleshooting serves the traces and explain paths.
func (s *Server) mountTroubleshooting(e *echo.Echo) {
	for _, p := range []string{"/:resource/:namespace/:name", "/:resource/:name"} {
		e.GET(TracesPath+p, s.traces)
		e.GET(ExplainPath+p, s.explain)
	}
}

// TraceHistory is the answer of the traces path.
type TraceHistory struct {
	Object string          `json:"object"`
	Traces []tracing.Trace `json:"traces"`
}

// troubleshootKey resolves the path's object to its tracing key.
func troubleshootKey(c echo.Context) (*kinds.Resource, string, string, error) {
	r, ok := kinds.Lookup(c.Param("resource"))
	if !ok {
		return nil, "", "", apierrors.NewNotFound(schema.GroupResource{Resource: c.Param("resource")}, "")
	}
	ns := c.Param("namespace")
	if r.Namespaced && ns == "" {
		return nil, "", "", apierrors.NewBadRequest(r.Name + " is namespaced: give a namespace")
	}
	if !r.Namespaced && ns != "" {
		return nil, "", "", apierrors.NewBadRequest(r.Name + " is not namespaced")
	}
	key := r.Name + "/" + c.Param("name")
	if ns != "" {
		key = r.Name + "/" + ns + "/" + c.Param("name")
	}
	return r, ns, key, nil
}

func (s *Server) traces(c echo.Context) error {
	_, _, key, err := troubleshootKey(c)
	if err != nil {
		return err
	}
	h := TraceHistory{Object: key, Traces: []tracing.Trace{}}
	if st := s.tracer.Store(); st != nil {
		h.Traces = append(h.Traces, st.History(key)...)
	}
	return writeJSON(c, http.StatusOK, h)
}
