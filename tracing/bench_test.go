package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// BenchmarkSpan: the cost of one span as an object actor makes it (4 attributes,
// kept in the store when sampled), by sampling ratio; "off" is a nil Tracer.
func BenchmarkSpan(b *testing.B) {
	for _, m := range []struct {
		name  string
		ratio float64
	}{{"off", -1}, {"sampled-1pct", 0.01}, {"sampled-all", 1}} {
		b.Run(m.name, func(b *testing.B) {
			var tr *Tracer
			if m.ratio >= 0 {
				var err error
				if tr, err = New(Options{Sampling: m.ratio}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, sp := tr.Start(context.Background(), "pods create")
				if sp.IsRecording() {
					sp.SetAttributes(ObjectKey.String("pods/default/web-1"), attribute.String("actor.kind", "pods"),
						attribute.String("message", "create"), attribute.String("mailbox.wait", "12µs"))
				}
				tr.Remember("pods/default/web-1", sp.SpanContext())
				sp.End()
			}
		})
	}
}
