package spans

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ObjectKey names the object a span is about, as the server's store indexes it
// ("pods/namespace/name"): the same key as the server's tracing.ObjectKey.
const ObjectKey = attribute.Key("k8s.object")

// NodeKey names the node whose agent made a span.
const NodeKey = attribute.Key("k8s.node")

// IngestPath is the server's path that takes the agent's finished spans (OTLP over
// HTTP, protobuf), relative to the server's URL.
const IngestPath = "/kubeactor/v1/spans"

// Bounds of the shipping: spans wait in a queue of QueueSize (more are dropped),
// leave in batches of at most BatchSize every BatchTimeout, and a batch the
// server has not taken within ExportTimeout is dropped (no retry).
const (
	QueueSize     = 2048
	BatchSize     = 256
	BatchTimeout  = time.Second
	ExportTimeout = 5 * time.Second
)

// scope is the instrumentation scope of the agent's spans.
const scope = "github.com/kubeactor/kubeactor/nodeagent"

// Options configure a Tracer.
type Options struct {
	// Sampling is the ratio of new traces sampled (0 to 1); a span continuing a
	// sampled server trace is sampled, one continuing an unsampled trace is not.
	Sampling float64
	// Node names the agent's node (NodeKey on every span, and the service).
	Node string
	// Server is the API server's URL; spans go to Server + IngestPath.
	Server string
	// Client makes the requests (the agent's credentials and CA); nil is
	// http.DefaultClient.
	Client *http.Client
	// Log, when set, takes the exporter's errors (a batch the server did not take
	// is dropped), at debug level: the process's OpenTelemetry error handler.
	Log logrus.FieldLogger
}

// Tracer is the agent's tracer. A nil *Tracer traces nothing.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// New starts a tracer whose finished sampled spans are POSTed to the server.
func New(o Options) (*Tracer, error) {
	if o.Sampling < 0 || o.Sampling > 1 {
		return nil, fmt.Errorf("spans: sampling %v not in [0, 1]", o.Sampling)
	}
	eo := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(o.Server + IngestPath),
		otlptracehttp.WithTimeout(ExportTimeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	}
	if o.Client != nil {
		eo = append(eo, otlptracehttp.WithHTTPClient(o.Client))
	}
	exp, err := otlptracehttp.New(context.Background(), eo...)
	if err != nil {
		return nil, fmt.Errorf("spans: exporter for %s: %w", o.Server, err)
	}
	if o.Log != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { o.Log.WithError(err).Debug("spans not sent") }))
	}
	p := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(o.Sampling))),
		sdktrace.WithBatcher(exp, sdktrace.WithMaxQueueSize(QueueSize), sdktrace.WithMaxExportBatchSize(BatchSize),
			sdktrace.WithBatchTimeout(BatchTimeout), sdktrace.WithExportTimeout(ExportTimeout)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "kubeactor-agent"), NodeKey.String(o.Node))),
	)
	return &Tracer{provider: p, tracer: p.Tracer(scope)}, nil
}

// Enabled tells whether t traces at all.
func (t *Tracer) Enabled() bool { return t != nil }

// Start starts a span (see trace.Tracer.Start). On a nil Tracer it returns ctx and
// the non-recording span ctx carries.
func (t *Tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, name, opts...)
}

// Shutdown sends the spans still queued and stops.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Child starts a span below the span ctx carries, with that span's tracer: when ctx
// carries no recording span (tracing off, or a trace not sampled) it costs nothing
// and records nothing. The runtime uses it, so it needs no tracer of its own.
func Child(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer(scope).Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends sp, noting err on it.
func End(sp trace.Span, err error) {
	if err != nil && sp.IsRecording() {
		sp.SetAttributes(attribute.String("error", err.Error()))
	}
	sp.End()
}

// Parse reads a W3C traceparent; an invalid one gives an invalid span context.
func Parse(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	h := http.Header{}
	h.Set("traceparent", traceparent)
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h)))
}

// Inject is an http.RoundTripper that sends the trace context of each request's
// context as a traceparent header, so the server's span of the request is a child
// of the agent's span that made it.
type Inject struct{ Next http.RoundTripper }

// RoundTrip adds the traceparent header when the request's context carries a span.
func (i Inject) RoundTrip(req *http.Request) (*http.Response, error) {
	if sc := trace.SpanContextFromContext(req.Context()); sc.IsValid() && req.Header.Get("traceparent") == "" {
		req = req.Clone(req.Context())
		propagation.TraceContext{}.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
	return i.Next.RoundTrip(req)
}

// ChildAt is Child for a span that started at start (known once it is over).
func ChildAt(ctx context.Context, name string, start time.Time, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer(scope).Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
}
