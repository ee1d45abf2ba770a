// Package tracing is the process's tracer: an OpenTelemetry tracer provider whose
// finished spans go to a bounded in-memory store (always) and to an OTLP collector
// (when an endpoint is set), and the memory of each object's last write so a later
// reader links to it. It imports nothing of the module.
package tracing

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ObjectKey is the attribute naming the object a span is about, as
// "resource/namespace/name" (or "resource/name" for cluster-scoped objects): the
// store's index.
const ObjectKey = attribute.Key("k8s.object")

// DefaultCapacity is the number of finished spans the store keeps when Options
// leaves it 0.
const DefaultCapacity = 20000

// Options configure a Tracer.
type Options struct {
	// Sampling is the ratio of new traces sampled (0 to 1); a trace continued from a
	// sampled parent is sampled.
	Sampling float64
	// Capacity is how many finished spans the in-memory store keeps; 0 means
	// DefaultCapacity.
	Capacity int
	// OTLPEndpoint, when set (host:port or a URL), exports spans with OTLP over HTTP.
	OTLPEndpoint string
	// Service names the process in exported spans.
	Service string
}

// Tracer is a process's tracer. A nil *Tracer traces nothing: its methods are no-ops
// returning non-recording spans.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	store    *Store
	last     sync.Map // object key -> trace.SpanContext of its last write
}

// Propagator reads and writes W3C traceparent headers.
var Propagator = propagation.TraceContext{}

// New starts a tracer provider with opts.
func New(opts Options) (*Tracer, error) {
	if opts.Sampling < 0 || opts.Sampling > 1 {
		return nil, fmt.Errorf("tracing: sampling %v not in [0, 1]", opts.Sampling)
	}
	if opts.Service == "" {
		opts.Service = "kubeactor"
	}
	st := NewStore(opts.Capacity)
	popts := []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(opts.Sampling))),
		sdktrace.WithSpanProcessor(st),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", opts.Service))),
	}
	if opts.OTLPEndpoint != "" {
		eo := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(endpointURL(opts.OTLPEndpoint))}
		exp, err := otlptracehttp.New(context.Background(), eo...)
		if err != nil {
			return nil, fmt.Errorf("tracing: otlp exporter: %w", err)
		}
		popts = append(popts, sdktrace.WithBatcher(exp))
	}
	p := sdktrace.NewTracerProvider(popts...)
	return &Tracer{provider: p, tracer: p.Tracer("github.com/kubeactor/kubeactor"), store: st}, nil
}

func endpointURL(e string) string {
	for _, p := range []string{"http://", "https://"} {
		if len(e) >= len(p) && e[:len(p)] == p {
			return e
		}
	}
	return "http://" + e + "/v1/traces"
}

// Start starts a span (see trace.Tracer.Start). On a nil Tracer it returns ctx and
// the non-recording span ctx carries.
func (t *Tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, name, opts...)
}

// Enabled tells whether t traces at all.
func (t *Tracer) Enabled() bool { return t != nil }

// Store is the in-memory store of finished spans (nil on a nil Tracer).
func (t *Tracer) Store() *Store {
	if t == nil {
		return nil
	}
	return t.store
}

// Remember notes sc as the trace context of the last write of the object key.
func (t *Tracer) Remember(key string, sc trace.SpanContext) {
	if t == nil || !sc.IsValid() {
		return
	}
	t.last.Store(key, sc)
}

// Forget drops what Remember noted of key (the object is gone).
func (t *Tracer) Forget(key string) {
	if t != nil {
		t.last.Delete(key)
	}
}

// Recall returns the trace context of the last write of key, or an invalid one.
func (t *Tracer) Recall(key string) trace.SpanContext {
	if t == nil {
		return trace.SpanContext{}
	}
	v, ok := t.last.Load(key)
	if !ok {
		return trace.SpanContext{}
	}
	return v.(trace.SpanContext)
}

// Shutdown flushes and stops the exporters.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}
