package dns

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/persistence"
)

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(os.Stderr)
	l.SetLevel(logrus.WarnLevel)
	return l
}

func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Log = quietLog()
	s, err := Start("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatalf("start dns: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

func TestServer(t *testing.T) {
	// An upstream resolver: another server, for its own domain.
	up := NewTable()
	up.SetService(newSvc("web", "www", "192.0.2.80").obj())
	upstream := startServer(t, Config{Zone: Zone{Domain: "example.test"}, Table: up})

	table := testTable()
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf("10.245.0.%d", i+1))
	}
	table.SetService(newSvc("team-a", "big", "None").obj())
	table.SetEndpoints(newEps("team-a", "big", many, nil))
	srv := startServer(t, Config{Zone: Zone{Domain: "cluster.local"}, Table: table, Upstreams: []string{upstream.Addr().String()}})
	alone := startServer(t, Config{Zone: Zone{Domain: "cluster.local"}, Table: table})
	dead := startServer(t, Config{Zone: Zone{Domain: "cluster.local"}, Table: table, Upstreams: []string{"127.0.0.1:1"},
		ForwardTimeout: 200 * time.Millisecond})

	tests := []struct {
		name      string
		server    *Server
		qname     string
		qtype     uint16
		rcode     int
		answers   int
		first     string // the first answer's value, if any
		truncated bool   // over UDP
	}{
		{name: "service", server: srv, qname: "web.default.svc.cluster.local.", qtype: mdns.TypeA, answers: 1, first: "10.254.0.20"},
		{name: "srv", server: srv, qname: "_http._tcp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV, answers: 1, first: "web.default.svc.cluster.local."},
		{name: "nxdomain", server: srv, qname: "nope.default.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError},
		{name: "forwarded upstream", server: srv, qname: "www.web.example.test.", qtype: mdns.TypeA, answers: 1, first: "192.0.2.80"},
		{name: "no upstream: refused", server: alone, qname: "www.web.example.test.", qtype: mdns.TypeA, rcode: mdns.RcodeRefused},
		{name: "upstream down: servfail", server: dead, qname: "www.web.example.test.", qtype: mdns.TypeA, rcode: mdns.RcodeServerFailure},
		{name: "large answer truncated over UDP", server: srv, qname: "big.team-a.svc.cluster.local.", qtype: mdns.TypeA, answers: 100, truncated: true},
	}
	for _, tt := range tests {
		for _, network := range []string{"udp", "tcp"} {
			t.Run(tt.name+"/"+network, func(t *testing.T) {
				c := &mdns.Client{Net: network, Timeout: 5 * time.Second}
				m, _, err := c.Exchange(new(mdns.Msg).SetQuestion(tt.qname, tt.qtype), tt.server.Addr().String())
				if err != nil {
					t.Fatalf("exchange: %v", err)
				}
				if m.Rcode != tt.rcode {
					t.Fatalf("rcode %s, want %s", mdns.RcodeToString[m.Rcode], mdns.RcodeToString[tt.rcode])
				}
				if network == "udp" && tt.truncated {
					if !m.Truncated || len(m.Answer) >= tt.answers {
						t.Fatalf("truncated %v with %d answers, want truncated", m.Truncated, len(m.Answer))
					}
					return
				}
				if m.Truncated || len(m.Answer) != tt.answers {
					t.Fatalf("truncated %v, %d answers (%v), want %d", m.Truncated, len(m.Answer), m.Answer, tt.answers)
				}
				if tt.first == "" {
					return
				}
				var got string
				switch r := m.Answer[0].(type) {
				case *mdns.A:
					got = r.A.String()
				case *mdns.SRV:
					got = r.Target
				}
				if got != tt.first {
					t.Errorf("first answer %v, want %s", m.Answer[0], tt.first)
				}
			})
		}
	}
}

func TestUpstreams(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		conf string // "" for no file
		skip []netip.AddrPort
		want []string
	}{
		{"no file", "", nil, nil},
		{"servers", "search example.com\nnameserver 192.0.2.1\nnameserver 2001:db8::1\n", nil, []string{"192.0.2.1:53", "[2001:db8::1]:53"}},
		{"own address skipped", "nameserver 127.0.0.1\nnameserver 192.0.2.1\n", []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:53")}, []string{"192.0.2.1:53"}},
		{"same host, other port kept", "nameserver 127.0.0.53\n", []netip.AddrPort{netip.MustParseAddrPort("127.0.0.53:10053")}, []string{"127.0.0.53:53"}},
		{"names are not resolvers", "nameserver dns.example\n", nil, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("resolv-%d.conf", i))
			if tt.conf != "" {
				if err := os.WriteFile(path, []byte(tt.conf), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := Upstreams(path, tt.skip...); !slices.Equal(got, tt.want) {
				t.Errorf("Upstreams = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFollow: the table follows the store's services and endpoints, from what is
// stored before it starts and through the change feed after.
func TestFollow(t *testing.T) {
	store, err := persistence.Open(persistence.Options{InMemory: true, NewObject: func(res string) (kruntime.Object, error) {
		switch res {
		case "services":
			return &corev1.Service{}, nil
		case "endpoints":
			return &corev1.Endpoints{}, nil
		}
		return nil, fmt.Errorf("unknown resource %q", res)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	put := func(op persistence.Op, obj kruntime.Object, res, ns, name string) {
		t.Helper()
		if _, _, err := store.Apply(ctx, persistence.Command{Op: op, Key: persistence.Key{Resource: res, Namespace: ns, Name: name}, Object: obj}); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	put(persistence.OpCreate, newSvc("default", "before", "10.254.0.40").obj(), "services", "default", "before")

	table := NewTable()
	Follow(ctx, store, table, quietLog())
	lookup := func(name string) []string {
		return rrs(Answer(new(mdns.Msg).SetQuestion(name, mdns.TypeA), Zone{Domain: "cluster.local"}, table).Msg.Answer)
	}
	if got := lookup("before.default.svc.cluster.local."); len(got) != 1 {
		t.Fatalf("stored service not loaded: %v", got)
	}

	steps := []struct {
		name  string
		do    func()
		qname string
		want  int // answers
	}{
		{"created", func() {
			put(persistence.OpCreate, newSvc("default", "db", "None").obj(), "services", "default", "db")
			put(persistence.OpCreate, newEps("default", "db", []string{"10.244.0.2", "10.244.0.3"}, nil), "endpoints", "default", "db")
		}, "db.default.svc.cluster.local.", 2},
		{"endpoints updated", func() {
			put(persistence.OpUpdate, newEps("default", "db", []string{"10.244.0.2"}, nil), "endpoints", "default", "db")
		}, "db.default.svc.cluster.local.", 1},
		{"deleted", func() { put(persistence.OpDelete, nil, "services", "default", "before") }, "before.default.svc.cluster.local.", 0},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do()
			deadline := time.Now().Add(10 * time.Second)
			for got := lookup(st.qname); len(got) != st.want; got = lookup(st.qname) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: answers %v, want %d", st.qname, got, st.want)
				}
				tick := time.NewTimer(5 * time.Millisecond)
				<-tick.C
			}
		})
	}
}
