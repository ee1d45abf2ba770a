package kubelet

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/nodeagent/spans"
)

// Tracing (Config.Tracer): a sync woken by a new version of its pod is a span that
// continues the trace of the write that made the version: the agent's own status
// write continues the sync that posted it; any other write's trace context comes
// from the server (apiclient.LastWrite, one request per such version). A sync of an
// unchanged pod (a resync, a requeue) becomes a span only once it acts: it stops,
// creates or starts a container, sees a probe change its result, or posts a status.
// The runtime's spans (image pull, container create and start) are its children.

// lastWriteTimeout bounds the question for a write's trace context: a slow server
// costs a sync at most this, and the sync is then a trace of its own.
const lastWriteTimeout = time.Second

// syncTrace is the span of one sync, started at once or when the sync first acts.
type syncTrace struct {
	t      *spans.Tracer
	parent context.Context
	start  time.Time
	attrs  []attribute.KeyValue
	span   trace.Span // nil until started
}

// traceSync prepares the span of a sync of w's pod; nil when the agent does not
// trace. The returned context carries the span when the sync starts one at once.
func (a *Agent) traceSync(ctx context.Context, w *worker, pod *corev1.Pod) (context.Context, *syncTrace) {
	if !a.cfg.Tracer.Enabled() {
		return ctx, nil
	}
	st := &w.st
	key := "pods/" + pod.Namespace + "/" + pod.Name
	tr := &syncTrace{t: a.cfg.Tracer, parent: context.Background(), start: time.Now(),
		attrs: []attribute.KeyValue{spans.ObjectKey.String(key), attribute.String("pod.uid", string(pod.UID)),
			attribute.String("pod.resourceVersion", pod.ResourceVersion)}}
	if pod.ResourceVersion == st.tracedRV {
		if st.lastSync.IsValid() {
			tr.parent = trace.ContextWithRemoteSpanContext(tr.parent, st.lastSync)
		}
		tr.attrs = append(tr.attrs, attribute.String("woken.by", "resync"))
		return ctx, tr
	}
	st.tracedRV = pod.ResourceVersion
	switch {
	case pod.ResourceVersion == st.postedRV && st.lastSync.IsValid():
		tr.parent = trace.ContextWithRemoteSpanContext(tr.parent, st.lastSync)
		tr.attrs = append(tr.attrs, attribute.String("woken.by", "own status write"))
		return ctx, tr // the status it posted: nothing new unless it acts
	case !w.static:
		lctx, cancel := context.WithTimeout(ctx, lastWriteTimeout)
		tp, err := a.api.LastWrite(lctx, "pods", pod.Namespace, pod.Name)
		cancel()
		if err != nil {
			a.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Debug("no trace context of the pod's last write")
		}
		if sc := spans.Parse(tp); sc.IsValid() {
			tr.parent = trace.ContextWithRemoteSpanContext(tr.parent, sc)
		}
	}
	tr.attrs = append(tr.attrs, attribute.String("woken.by", "pod changed"))
	return tr.begin(ctx), tr
}

// begin starts the sync's span if it has not started, and returns ctx carrying it.
func (tr *syncTrace) begin(ctx context.Context) context.Context {
	if tr == nil {
		return ctx
	}
	if tr.span == nil {
		_, tr.span = tr.t.Start(tr.parent, "pod sync", trace.WithTimestamp(tr.start), trace.WithAttributes(tr.attrs...))
	}
	return trace.ContextWithSpan(ctx, tr.span)
}

// end ends the sync's span, if it started, with what the sync decided; the worker
// remembers it as the parent of the syncs its status write wakes.
func (tr *syncTrace) end(w *worker, attrs ...attribute.KeyValue) {
	if tr == nil || tr.span == nil {
		return
	}
	if tr.span.IsRecording() {
		tr.span.SetAttributes(attrs...)
	}
	tr.span.End()
	w.st.lastSync = tr.span.SpanContext()
}

// probeChanged records a probe whose result changed as a span of the sync (from the
// probe's start).
func (tr *syncTrace) probeChanged(ctx context.Context, kind probeKind, container string, started time.Time, result bool, msg string) {
	if tr == nil {
		return
	}
	ctx = tr.begin(ctx)
	_, sp := spans.ChildAt(ctx, "probe transition", started, attribute.String("probe", kind.String()),
		attribute.String("container", container), attribute.Bool("result", result), attribute.String("message", msg))
	sp.End()
}
