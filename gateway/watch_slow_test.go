package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// A watch client that stops reading costs the server a bounded buffer: it is not
// sent the events it lags on once they leave the change log, but a 410 Gone after
// what was already queued for it, in order.
func TestWatchStalledClientExpires(t *testing.T) {
	h := newHarness(t, harnessOptions{changeLogWindow: 100})
	// 800 creates of 32 KiB: under -race on a loaded machine they outlast testCtx's
	// 30 s, which bounds a test's few requests.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := net.Dial("tcp", h.http.Listener.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(16 << 10); err != nil {
		t.Fatalf("read buffer: %v", err)
	}
	if _, err := fmt.Fprintf(conn, "GET /api/v1/namespaces/default/pods?watch=1&resourceVersion=%d HTTP/1.1\r\nHost: test\r\n\r\n", h.store.Revision()); err != nil {
		t.Fatalf("send: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", resp, err)
	}
	defer resp.Body.Close()

	// The client reads nothing while 24 MiB of pods are created: far more than the
	// socket buffers (at most 4 MiB sent + 16 KiB received here) and the server's own.
	const n, size = 800, 32 << 10
	pad := strings.Repeat("x", size)
	pods := h.client.CoreV1().Pods("default")
	for i := 0; i < n; i++ {
		p := newPod(fmt.Sprintf("p%04d", i)).obj()
		p.Annotations = map[string]string{"pad": pad}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	expired := h.server.metrics.expired.WithLabelValues("pods")
	// The server looks again each time a write has made no progress for 1 s; under
	// -race beside other packages' tests that took over 10 s (eventually's bound).
	poll.UntilTrue(t, time.Minute, "the server gives up on the stalled watcher", func() bool {
		var m dto.Metric
		return expired.Write(&m) == nil && m.GetCounter().GetValue() == 1
	})

	// Resumed, the client gets a prefix of the events in order, then the 410.
	body := &countingReader{r: resp.Body}
	dec := json.NewDecoder(body)
	var got []string
	var last struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if err != io.EOF {
				t.Fatalf("decode after %d events: %v", len(got), err)
			}
			break
		}
		last = ev
		if ev.Type == "ADDED" {
			var m struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(ev.Object, &m); err != nil {
				t.Fatalf("decode pod: %v", err)
			}
			got = append(got, m.Metadata.Name)
		}
	}
	var st metav1.Status
	if err := json.Unmarshal(last.Object, &st); last.Type != "ERROR" || err != nil || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("last event %s %s (%v), want ERROR 410 Expired", last.Type, last.Object, err)
	}
	for i, name := range got {
		if want := fmt.Sprintf("p%04d", i); name != want {
			t.Fatalf("event %d is %s, want %s", i, name, want)
		}
	}
	if len(got) >= n || body.n > n*size/2 {
		t.Fatalf("a stalled client was sent %d of %d events (%d bytes): not bounded", len(got), n, body.n)
	}
	t.Logf("stalled client: %d of %d events (%d KiB), then 410", len(got), n, body.n>>10)
}
