package docker

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// TestDockerSpans: in a recording span's context, a create, a start and a failed
// pull on the real engine are spans below it, named, with the container and image
// and the pull's error; the Docker client's own HTTP calls are not spans. Without a
// span in the context nothing is recorded.
func TestDockerSpans(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	// Without a span: nothing.
	run(t, d, runtime.ContainerConfig{Image: busyboxImage, Cmd: []string{"sleep", "60"}}, true)
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans recorded without a parent span", n)
	}

	ctx, sync := tp.Tracer("test").Start(testCtx(t), "pod sync")
	name := uniqueName(t)
	id, err := d.CreateContainer(ctx, runtime.ContainerConfig{Name: name, Image: busyboxImage, Cmd: []string{"sleep", "60"},
		Labels: map[string]string{testLabel: "true"}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = d.RemoveContainer(context.Background(), id) })
	if err := d.StartContainer(ctx, id); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := d.PullImage(ctx, "kubeactor/no-such-image:v0", nil); err == nil {
		t.Fatal("pull of a missing image succeeded")
	}
	sync.End()

	want := []struct{ name, key, value string }{
		{"container create", "container.name", name},
		{"container start", "container.id", id},
		{"image pull", "image", "kubeactor/no-such-image:v0"},
		{"pod sync", "", ""},
	}
	got := rec.Ended()
	if len(got) != len(want) {
		var names []string
		for _, s := range got {
			names = append(names, s.Name())
		}
		t.Fatalf("spans %v, want %d", names, len(want))
	}
	for i, w := range want {
		s := got[i]
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		if s.Name() != w.name || (w.key != "" && attrs[w.key] != w.value) {
			t.Errorf("span %d: %s %v, want %s with %s=%s", i, s.Name(), attrs, w.name, w.key, w.value)
		}
		if w.name != "pod sync" && s.Parent().SpanID() != sync.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the sync", s.Name())
		}
		if w.name == "image pull" && !strings.Contains(attrs["error"], "no-such-image") {
			t.Errorf("pull span without its error: %v", attrs)
		}
		if w.name == "container create" && attrs["container.id"] != id {
			t.Errorf("create span names container %q, want %q", attrs["container.id"], id)
		}
	}
}
