package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

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

// The node agents' side (docs/architecture.md, tracing): GET
// /kubeactor/v1/lastwrite/{resource}[/{namespace}]/{name} answers the traceparent of
// the object's last write (tracing.Tracer.Recall), so an agent woken by the write
// continues its trace; POST /kubeactor/v1/spans takes an agent's finished spans
// (OTLP over HTTP, protobuf) into the store, so the traces path shows them.

// TracesPath and ExplainPath prefix the troubleshooting paths; LastWritePath and
// SpansPath are the agents'.
const (
	TracesPath    = "/kubeactor/v1/traces"
	ExplainPath   = "/kubeactor/v1/explain"
	LastWritePath = "/kubeactor/v1/lastwrite"
	SpansPath     = "/kubeactor/v1/spans"
)

// maxSpansBody bounds the body of a POST to SpansPath.
const maxSpansBody = 4 << 20

// startRequest starts the span of request c; the returned request carries it.
// It returns a nil span when tracing is off.
func (s *Server) startRequest(c echo.Context) (*http.Request, trace.Span) {
	if s.tracer == nil {
		return c.Request(), nil
	}
	req := c.Request()
	if p := req.URL.Path; p == SpansPath || strings.HasPrefix(p, LastWritePath+"/") {
		return req, nil // the agents' tracing plumbing is not traced itself
	}
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
		e.GET(LastWritePath+p, s.lastWrite)
	}
	e.POST(SpansPath, s.ingestSpans)
}

// LastWrite is the answer of the last-write path.
type LastWrite struct {
	Object      string `json:"object"`
	Traceparent string `json:"traceparent,omitempty"` // "" when no write of it is remembered
}

func (s *Server) lastWrite(c echo.Context) error {
	_, _, key, err := troubleshootKey(c)
	if err != nil {
		return err
	}
	lw := LastWrite{Object: key}
	if sc := s.tracer.Recall(key); sc.IsValid() {
		h := http.Header{}
		tracing.Propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), propagation.HeaderCarrier(h))
		lw.Traceparent = h.Get("traceparent")
	}
	return writeJSON(c, http.StatusOK, lw)
}

// ingestSpans keeps a node agent's finished spans (an OTLP ExportTraceServiceRequest
// in protobuf); a server without tracing takes them and keeps nothing. It answers an
// empty ExportTraceServiceResponse.
func (s *Server) ingestSpans(c echo.Context) error {
	req := c.Request()
	if ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); ct != "application/x-protobuf" {
		return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "create", schema.GroupResource{}, "",
			fmt.Sprintf("spans: content type %q: want application/x-protobuf (OTLP)", ct), 0, false)
	}
	if req.Header.Get("Content-Encoding") != "" {
		return apierrors.NewBadRequest("spans: content encoding " + req.Header.Get("Content-Encoding") + " not accepted")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, maxSpansBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("spans: more than %d bytes", maxSpansBody))
		}
		return apierrors.NewBadRequest("spans: " + err.Error())
	}
	spans, err := tracing.Decode(body)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if st := s.tracer.Store(); st != nil {
		for _, sp := range spans {
			st.Add(sp)
		}
	}
	return c.Blob(http.StatusOK, "application/x-protobuf", nil)
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
