package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/tracing"
)

func TestPrintTraces(t *testing.T) {
	start := time.Date(2026, 11, 26, 7, 45, 12, 345e6, time.UTC)
	tests := []struct {
		name string
		in   gateway.TraceHistory
		want string
	}{
		{name: "nothing kept", in: gateway.TraceHistory{Object: "pods/default/x"},
			want: "no spans kept for pods/default/x (sampled out, or older than the store)\n"},
		{name: "a replica did not answer", in: gateway.TraceHistory{Object: "pods/default/x", Partial: []string{"m2", "m3"}},
			want: "partial: no answer from replica(s) m2, m3: their spans are missing\n" +
				"no spans kept for pods/default/x (sampled out, or older than the store)\n"},
		{name: "a tree", in: gateway.TraceHistory{Object: "pods/default/web-1", Traces: []tracing.Trace{{
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Start: start,
			Roots: []*tracing.Node{{Name: "POST /api/v1/namespaces/:namespace/replicationcontrollers", Duration: 2500 * time.Microsecond,
				Attributes: map[string]string{"http.method": "POST", "http.status_code": "201"},
				Children: []*tracing.Node{{Name: "replicationcontrollers create", StartOffset: 150 * time.Microsecond, Duration: 2 * time.Millisecond,
					Attributes: map[string]string{"actor.kind": "replicationcontrollers", "mailbox.wait": "12µs"},
					Children: []*tracing.Node{{Name: "pods create", StartOffset: 1234567 * time.Nanosecond, Duration: 800},
						{Name: "scheduler round", StartOffset: 1500 * time.Millisecond, Duration: 90 * time.Microsecond,
							Attributes: map[string]string{"node": "n1", "result": "bound"}}}}}}}}}},
			want: `trace 4bf92f3577b34da6a3ce929d0e0e4736  2026-11-26 07:45:12.345  (pods/default/web-1)
     START   DURATION  SPAN
       +0s      2.5ms  POST /api/v1/namespaces/:namespace/replicationcontrollers  http.status_code=201
    +150µs        2ms    replicationcontrollers create  mailbox.wait=12µs
   +1.23ms      800ns      pods create
     +1.5s       90µs      scheduler round  node=n1 result=bound
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printTraces(&b, tc.in)
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
