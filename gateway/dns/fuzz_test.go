package dns

import (
	"testing"

	mdns "github.com/miekg/dns"
)

// FuzzAnswer: any message that unpacks gets an answer that packs, or is forwarded.
func FuzzAnswer(f *testing.F) {
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"web.default.svc.cluster.local.", mdns.TypeA},
		{"_pg._tcp.db.team-a.svc.cluster.local.", mdns.TypeSRV},
		{"20.0.254.10.in-addr.arpa.", mdns.TypePTR},
		{"cluster.local.", mdns.TypeSOA},
		{"example.com.", mdns.TypeA},
	} {
		b, err := new(mdns.Msg).SetQuestion(q.name, q.qtype).Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	table := testTable()
	f.Fuzz(func(t *testing.T, b []byte) {
		req := new(mdns.Msg)
		if req.Unpack(b) != nil {
			return
		}
		r := Answer(req, Zone{Domain: "cluster.local"}, table)
		if r.Forward {
			return
		}
		if r.Msg == nil {
			t.Fatal("no answer and not forwarded")
		}
		if _, err := r.Msg.Pack(); err != nil {
			t.Fatalf("answer does not pack: %v\n%v", err, r.Msg)
		}
	})
}
