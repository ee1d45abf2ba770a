package dns

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// svcB builds services.
type svcB struct{ s *corev1.Service }

func newSvc(ns, name, clusterIP string) *svcB {
	return &svcB{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP}}}
}

func (b *svcB) port(name string, proto corev1.Protocol, port int32) *svcB {
	b.s.Spec.Ports = append(b.s.Spec.Ports, corev1.ServicePort{Name: name, Protocol: proto, Port: port})
	return b
}

func (b *svcB) external(name string) *svcB {
	b.s.Spec.Type, b.s.Spec.ClusterIP, b.s.Spec.ExternalName = corev1.ServiceTypeExternalName, "", name
	return b
}

func (b *svcB) obj() *corev1.Service { return b.s }

// newEps builds endpoints: one subset with the ready addresses (an address
// "host=ip" has a hostname), the not-ready ones and the ports.
func newEps(ns, name string, ready, notReady []string, ports ...corev1.EndpointPort) *corev1.Endpoints {
	ss := corev1.EndpointSubset{Ports: ports}
	for _, a := range ready {
		host, ip, ok := strings.Cut(a, "=")
		if !ok {
			host, ip = "", a
		}
		ss.Addresses = append(ss.Addresses, corev1.EndpointAddress{IP: ip, Hostname: host})
	}
	for _, a := range notReady {
		ss.NotReadyAddresses = append(ss.NotReadyAddresses, corev1.EndpointAddress{IP: a})
	}
	return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Subsets: []corev1.EndpointSubset{ss}}
}

func testTable() *Table {
	t := NewTable()
	t.SetService(newSvc("default", "web", "10.254.0.20").port("http", corev1.ProtocolTCP, 80).port("dns", corev1.ProtocolUDP, 53).obj())
	t.SetService(newSvc("team-a", "db", "None").port("pg", corev1.ProtocolTCP, 5432).obj())
	t.SetEndpoints(newEps("team-a", "db", []string{"10.244.1.5", "db-0=10.244.2.7"}, []string{"10.244.3.9"},
		corev1.EndpointPort{Name: "pg", Protocol: corev1.ProtocolTCP, Port: 15432}))
	t.SetService(newSvc("team-a", "empty", "None").obj())
	t.SetService(newSvc("default", "ext", "").external("example.com").obj())
	t.SetService(newSvc("svc", "odd", "10.254.0.30").obj()) // a namespace called svc
	return t
}

// rrs renders records as "type value" strings.
func rrs(list []mdns.RR) []string {
	var out []string
	for _, rr := range list {
		switch r := rr.(type) {
		case *mdns.A:
			out = append(out, "A "+r.Hdr.Name+" "+r.A.String())
		case *mdns.SRV:
			out = append(out, "SRV "+r.Hdr.Name+" "+r.Target+" "+strconv.Itoa(int(r.Port)))
		case *mdns.PTR:
			out = append(out, "PTR "+r.Ptr)
		case *mdns.CNAME:
			out = append(out, "CNAME "+r.Target)
		case *mdns.SOA:
			out = append(out, "SOA "+r.Hdr.Name)
		default:
			out = append(out, rr.String())
		}
	}
	return out
}

func TestAnswer(t *testing.T) {
	zone := Zone{Domain: "cluster.local"}
	tests := []struct {
		name    string
		qname   string
		qtype   uint16
		forward bool
		rcode   int
		answer  []string
		extra   []string
		soa     bool // the zone's SOA in the authority section
	}{
		{name: "service A", qname: "web.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"A web.default.svc.cluster.local. 10.254.0.20"}},
		{name: "older form", qname: "web.default.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"A web.default.cluster.local. 10.254.0.20"}},
		{name: "no trailing dot", qname: "web.default.svc.cluster.local", qtype: mdns.TypeA,
			answer: []string{"A web.default.svc.cluster.local. 10.254.0.20"}},
		{name: "case is ignored and echoed", qname: "WEB.Default.SVC.Cluster.Local.", qtype: mdns.TypeA,
			answer: []string{"A WEB.Default.SVC.Cluster.Local. 10.254.0.20"}},
		{name: "ANY is A", qname: "web.default.svc.cluster.local.", qtype: mdns.TypeANY,
			answer: []string{"A web.default.svc.cluster.local. 10.254.0.20"}},
		{name: "AAAA of a service: no data", qname: "web.default.svc.cluster.local.", qtype: mdns.TypeAAAA, soa: true},
		{name: "SRV of a named port", qname: "_http._tcp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{"SRV _http._tcp.web.default.svc.cluster.local. web.default.svc.cluster.local. 80"},
			extra:  []string{"A web.default.svc.cluster.local. 10.254.0.20"}},
		{name: "SRV over UDP", qname: "_dns._udp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{"SRV _dns._udp.web.default.svc.cluster.local. web.default.svc.cluster.local. 53"},
			extra:  []string{"A web.default.svc.cluster.local. 10.254.0.20"}},
		{name: "SRV older form", qname: "_http._tcp.web.default.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{"SRV _http._tcp.web.default.cluster.local. web.default.svc.cluster.local. 80"},
			extra:  []string{"A web.default.svc.cluster.local. 10.254.0.20"}},
		{name: "SRV wrong protocol", qname: "_http._udp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "SRV unknown port", qname: "_ftp._tcp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "headless: every ready address", qname: "db.team-a.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"A db.team-a.svc.cluster.local. 10.244.1.5", "A db.team-a.svc.cluster.local. 10.244.2.7"}},
		{name: "headless SRV: per endpoint", qname: "_pg._tcp.db.team-a.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{
				"SRV _pg._tcp.db.team-a.svc.cluster.local. 10-244-1-5.db.team-a.svc.cluster.local. 15432",
				"SRV _pg._tcp.db.team-a.svc.cluster.local. db-0.db.team-a.svc.cluster.local. 15432"},
			extra: []string{"A 10-244-1-5.db.team-a.svc.cluster.local. 10.244.1.5", "A db-0.db.team-a.svc.cluster.local. 10.244.2.7"}},
		{name: "headless endpoint by IP", qname: "10-244-1-5.db.team-a.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"A 10-244-1-5.db.team-a.svc.cluster.local. 10.244.1.5"}},
		{name: "headless endpoint by hostname", qname: "db-0.db.team-a.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"A db-0.db.team-a.svc.cluster.local. 10.244.2.7"}},
		{name: "not-ready endpoint is not answered", qname: "10-244-3-9.db.team-a.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "headless without endpoints: no data", qname: "empty.team-a.svc.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "external name", qname: "ext.default.svc.cluster.local.", qtype: mdns.TypeA, answer: []string{"CNAME example.com."}},
		{name: "unknown service", qname: "nope.default.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, soa: true},
		{name: "unknown namespace", qname: "web.nope.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, soa: true},
		{name: "too many labels", qname: "a.b.web.default.svc.cluster.local.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError, soa: true},
		{name: "namespace name exists", qname: "team-a.svc.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "a namespace called svc, older form", qname: "odd.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"A odd.svc.cluster.local. 10.254.0.30"}},
		{name: "zone apex SOA", qname: "cluster.local.", qtype: mdns.TypeSOA, answer: []string{"SOA cluster.local."}},
		{name: "PTR of a cluster IP", qname: "20.0.254.10.in-addr.arpa.", qtype: mdns.TypePTR,
			answer: []string{"PTR web.default.svc.cluster.local."}},
		{name: "PTR of another address is forwarded", qname: "1.1.168.192.in-addr.arpa.", qtype: mdns.TypePTR, forward: true},
		{name: "outside the domain is forwarded", qname: "example.com.", qtype: mdns.TypeA, forward: true},
		{name: "a suffix that is not a label boundary is forwarded", qname: "notcluster.local.", qtype: mdns.TypeA, forward: true},
	}
	table := testTable()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := new(mdns.Msg)
			req.SetQuestion(tt.qname, tt.qtype)
			r := Answer(req, zone, table)
			if r.Forward != tt.forward {
				t.Fatalf("forward = %v, want %v", r.Forward, tt.forward)
			}
			if tt.forward {
				return
			}
			m := r.Msg
			if m.Id != req.Id || !m.Response || !m.Authoritative || m.Rcode != tt.rcode {
				t.Fatalf("header id %d response %v aa %v rcode %s; want rcode %s", m.Id, m.Response, m.Authoritative,
					mdns.RcodeToString[m.Rcode], mdns.RcodeToString[tt.rcode])
			}
			if got := rrs(m.Answer); !slices.Equal(got, tt.answer) {
				t.Errorf("answer %q, want %q", got, tt.answer)
			}
			if got := rrs(m.Extra); !slices.Equal(got, tt.extra) {
				t.Errorf("extra %q, want %q", got, tt.extra)
			}
			if got := len(m.Ns) == 1 && rrs(m.Ns)[0] == "SOA cluster.local."; got != tt.soa {
				t.Errorf("authority %q, want SOA: %v", rrs(m.Ns), tt.soa)
			}
			for _, rr := range m.Answer {
				if rr.Header().Ttl != DefaultTTL {
					t.Errorf("ttl %d, want %d", rr.Header().Ttl, DefaultTTL)
				}
			}
		})
	}
}

func TestAnswerMalformed(t *testing.T) {
	tests := []struct {
		name  string
		req   func() *mdns.Msg
		rcode int
	}{
		{"no question", func() *mdns.Msg { return new(mdns.Msg) }, mdns.RcodeFormatError},
		{"two questions", func() *mdns.Msg {
			m := new(mdns.Msg).SetQuestion("a.cluster.local.", mdns.TypeA)
			m.Question = append(m.Question, m.Question[0])
			return m
		}, mdns.RcodeFormatError},
		{"not a query", func() *mdns.Msg {
			m := new(mdns.Msg).SetQuestion("a.cluster.local.", mdns.TypeA)
			m.Opcode = mdns.OpcodeUpdate
			return m
		}, mdns.RcodeNotImplemented},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Answer(tt.req(), Zone{Domain: "cluster.local"}, NewTable())
			if r.Forward || r.Msg.Rcode != tt.rcode {
				t.Fatalf("forward %v rcode %d, want %d", r.Forward, r.Msg.Rcode, tt.rcode)
			}
		})
	}
}

// TestTableUpdates: a replaced service loses its old cluster IP's PTR; a deleted one
// is NXDOMAIN.
func TestTableUpdates(t *testing.T) {
	table := testTable()
	table.SetService(newSvc("default", "web", "10.254.0.21").obj())
	ask := func(name string, qtype uint16) *mdns.Msg {
		return Answer(new(mdns.Msg).SetQuestion(name, qtype), Zone{Domain: "cluster.local"}, table).Msg
	}
	if m := ask("web.default.svc.cluster.local.", mdns.TypeA); len(m.Answer) != 1 || m.Answer[0].(*mdns.A).A.String() != "10.254.0.21" {
		t.Fatalf("after update: %v", m.Answer)
	}
	if r := Answer(new(mdns.Msg).SetQuestion("20.0.254.10.in-addr.arpa.", mdns.TypePTR), Zone{Domain: "cluster.local"}, table); !r.Forward {
		t.Fatalf("old IP's PTR still answered: %v", r.Msg)
	}
	table.DeleteService("default", "web")
	if m := ask("web.default.svc.cluster.local.", mdns.TypeA); m.Rcode != mdns.RcodeNameError {
		t.Fatalf("after delete: rcode %d", m.Rcode)
	}
	table.ResetServices(nil)
	if m := ask("odd.svc.cluster.local.", mdns.TypeA); m.Rcode != mdns.RcodeNameError {
		t.Fatalf("after reset: rcode %d", m.Rcode)
	}
}
