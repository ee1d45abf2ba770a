package dns

import (
	"net/netip"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// DefaultTTL is the TTL of every answer when Zone.TTL is 0 (seconds).
const DefaultTTL = 30

// Zone is the cluster domain the server answers for.
type Zone struct {
	Domain string // e.g. "cluster.local": lower case, no trailing dot
	TTL    uint32 // of every record; 0 means DefaultTTL
}

// Reply is Answer's decision: a message to send, or the question to forward.
type Reply struct {
	Msg *mdns.Msg // nil when Forward
	// Forward: the name is not the cluster's; ask the upstream resolvers.
	Forward bool
}

// Answer answers req from the table's services and endpoints. Names in the cluster
// domain:
//
//	<svc>.<ns>.svc.<domain>, <svc>.<ns>.<domain>   A: the cluster IP, or for a headless
//	                                               service every ready endpoint address
//	_<port>._<proto>.<svc>.<ns>.svc.<domain>       SRV per named port (also without svc.)
//	<endpoint>.<svc>.<ns>.svc.<domain>             A of a headless service's endpoint
//	                                               (its hostname, or its IP with dashes)
//
// Unknown names in the domain are NXDOMAIN, known names without records of the asked
// type NOERROR with no answer; both carry the zone's SOA. The PTR of a service's
// cluster IP is answered; any other name is to be forwarded. Matching ignores case and
// a missing trailing dot. Answer only reads the table (under its read lock).
func Answer(req *mdns.Msg, z Zone, t *Table) Reply {
	resp := new(mdns.Msg)
	switch {
	case req.Opcode != mdns.OpcodeQuery:
		resp.SetRcode(req, mdns.RcodeNotImplemented)
		return Reply{Msg: resp}
	case len(req.Question) != 1:
		resp.SetRcode(req, mdns.RcodeFormatError)
		return Reply{Msg: resp}
	}
	q := req.Question[0]
	name := strings.ToLower(mdns.Fqdn(q.Name))
	a := answerer{z: z, t: t, qname: mdns.Fqdn(q.Name), domain: mdns.Fqdn(strings.ToLower(z.Domain)), ttl: z.TTL}
	if a.ttl == 0 {
		a.ttl = DefaultTTL
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	var r result
	switch {
	case q.Qclass != mdns.ClassINET && q.Qclass != mdns.ClassANY:
		return Reply{Forward: true}
	case mdns.IsSubDomain(a.domain, name):
		rest := strings.TrimSuffix(strings.TrimSuffix(name, a.domain), ".")
		var labels []string
		if rest != "" {
			labels = strings.Split(rest, ".")
		}
		r = a.cluster(labels)
	case q.Qtype == mdns.TypePTR && strings.HasSuffix(name, ".in-addr.arpa."):
		var ok bool
		if r, ok = a.ptr(name); !ok {
			return Reply{Forward: true}
		}
	default:
		return Reply{Forward: true}
	}

	resp.SetReply(req)
	resp.Authoritative, resp.RecursionAvailable = true, true
	for _, rr := range r.answer {
		if q.Qtype == mdns.TypeANY || rr.Header().Rrtype == q.Qtype || rr.Header().Rrtype == mdns.TypeCNAME {
			resp.Answer = append(resp.Answer, rr)
		}
	}
	if len(resp.Answer) > 0 {
		resp.Extra = r.extra
	} else {
		resp.Ns = []mdns.RR{a.soa()}
		if !r.exists {
			resp.Rcode = mdns.RcodeNameError
		}
	}
	if opt := req.IsEdns0(); opt != nil {
		resp.SetEdns0(max(opt.UDPSize(), mdns.MinMsgSize), false)
	}
	return Reply{Msg: resp}
}

// result is what a name has: its records of every type (filtered by the question's
// type later), additional records, and whether the name exists at all.
type result struct {
	answer, extra []mdns.RR
	exists        bool
}

type answerer struct {
	z      Zone
	t      *Table
	qname  string // as asked (answers echo its case), with the trailing dot
	domain string // lower case, with the trailing dot
	ttl    uint32
}

// cluster resolves the labels of a name in front of the cluster domain.
func (a answerer) cluster(labels []string) result {
	n := len(labels)
	if n == 0 {
		return result{answer: []mdns.RR{a.soa()}, exists: true}
	}
	if labels[n-1] == "svc" {
		if r := a.resolve(labels[:n-1], true); r.exists {
			return r
		}
	}
	return a.resolve(labels, false) // <svc>.<ns>.<domain>, the older form
}

// resolve looks up the labels in front of "svc.<domain>" (svc) or "<domain>".
func (a answerer) resolve(l []string, svc bool) result {
	switch len(l) {
	case 0: // svc.<domain>
		return result{exists: true}
	case 1: // <ns>.svc.<domain>
		return result{exists: a.t.namespaces[l[0]] > 0}
	case 2: // <svc>.<ns>
		return a.service(l[1], l[0])
	case 3: // <endpoint>.<svc>.<ns>.svc
		if svc {
			return a.endpoint(l[2], l[1], l[0])
		}
	case 4: // _<port>._<proto>.<svc>.<ns>
		if strings.HasPrefix(l[0], "_") && strings.HasPrefix(l[1], "_") {
			return a.srv(l[3], l[2], l[0][1:], strings.ToUpper(l[1][1:]))
		}
	}
	return result{}
}

func (a answerer) hdr(name string, rrtype uint16) mdns.RR_Header {
	return mdns.RR_Header{Name: name, Rrtype: rrtype, Class: mdns.ClassINET, Ttl: a.ttl}
}

// addr is an A or AAAA record of ip.
func (a answerer) addr(name string, ip netip.Addr) mdns.RR {
	if ip.Is4() {
		return &mdns.A{Hdr: a.hdr(name, mdns.TypeA), A: ip.AsSlice()}
	}
	return &mdns.AAAA{Hdr: a.hdr(name, mdns.TypeAAAA), AAAA: ip.AsSlice()}
}

func (a answerer) soa() mdns.RR {
	return &mdns.SOA{Hdr: a.hdr(a.domain, mdns.TypeSOA), Ns: "ns.dns." + a.domain, Mbox: "hostmaster." + a.domain,
		Serial: 1, Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: a.ttl}
}

// serviceName is the canonical name of a service.
func (a answerer) serviceName(ns, name string) string { return name + "." + ns + ".svc." + a.domain }

func headless(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == ""
}

// service answers a service's own name.
func (a answerer) service(ns, name string) result {
	svc, eps := a.t.service(ns, name)
	if svc == nil {
		return result{}
	}
	r := result{exists: true}
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		if svc.Spec.ExternalName != "" {
			r.answer = append(r.answer, &mdns.CNAME{Hdr: a.hdr(a.qname, mdns.TypeCNAME), Target: mdns.Fqdn(svc.Spec.ExternalName)})
		}
	case headless(svc):
		for _, e := range readyAddresses(eps) {
			r.answer = append(r.answer, a.addr(a.qname, e.ip))
		}
	default:
		if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
			r.answer = append(r.answer, a.addr(a.qname, ip))
		}
	}
	return r
}

// endpoint answers one endpoint of a headless service.
func (a answerer) endpoint(ns, name, label string) result {
	svc, eps := a.t.service(ns, name)
	if svc == nil || !headless(svc) {
		return result{}
	}
	r := result{}
	for _, e := range readyAddresses(eps) {
		if e.label == label {
			r.exists = true
			r.answer = append(r.answer, a.addr(a.qname, e.ip))
		}
	}
	return r
}

// srv answers the SRV records of a named port.
func (a answerer) srv(ns, name, port, proto string) result {
	svc, eps := a.t.service(ns, name)
	if svc == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return result{}
	}
	r := result{}
	if !headless(svc) {
		ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil {
			return r
		}
		target := a.serviceName(ns, name)
		for _, sp := range svc.Spec.Ports {
			if sp.Name == port && string(sp.Protocol) == proto {
				r.exists = true
				r.answer = append(r.answer, &mdns.SRV{Hdr: a.hdr(a.qname, mdns.TypeSRV), Priority: 10, Weight: 100, Port: uint16(sp.Port), Target: target})
				r.extra = append(r.extra, a.addr(target, ip))
			}
		}
		return r
	}
	for _, e := range readyAddresses(eps) {
		for _, p := range e.ports {
			if p.Name == port && string(p.Protocol) == proto {
				target := e.label + "." + a.serviceName(ns, name)
				r.exists = true
				r.answer = append(r.answer, &mdns.SRV{Hdr: a.hdr(a.qname, mdns.TypeSRV), Priority: 10, Weight: 100, Port: uint16(p.Port), Target: target})
				r.extra = append(r.extra, a.addr(target, e.ip))
			}
		}
	}
	return r
}

// ptr answers the reverse name of a service's cluster IP; ok is false when it is not
// one.
func (a answerer) ptr(name string) (result, bool) {
	l := strings.Split(strings.TrimSuffix(name, ".in-addr.arpa."), ".")
	if len(l) != 4 {
		return result{}, false
	}
	slices.Reverse(l)
	ip, err := netip.ParseAddr(strings.Join(l, "."))
	if err != nil {
		return result{}, false
	}
	k, ok := a.t.byIP[ip]
	if !ok {
		return result{}, false
	}
	return result{exists: true, answer: []mdns.RR{&mdns.PTR{Hdr: a.hdr(a.qname, mdns.TypePTR), Ptr: a.serviceName(k.Namespace, k.Name)}}}, true
}

// readyAddress is one ready endpoint address of a service, with the ports it serves.
type readyAddress struct {
	ip    netip.Addr
	label string // its DNS label: the hostname, or the IP with dashes
	ports []corev1.EndpointPort
}

// readyAddresses lists the ready addresses of eps, each once, by IP.
func readyAddresses(eps *corev1.Endpoints) []readyAddress {
	if eps == nil {
		return nil
	}
	byIP := map[netip.Addr]int{}
	var out []readyAddress
	for _, ss := range eps.Subsets {
		for _, ad := range ss.Addresses {
			ip, err := netip.ParseAddr(ad.IP)
			if err != nil {
				continue
			}
			if i, ok := byIP[ip]; ok {
				out[i].ports = append(out[i].ports, ss.Ports...)
				continue
			}
			label := strings.ToLower(ad.Hostname)
			if label == "" {
				label = strings.NewReplacer(".", "-", ":", "-").Replace(ip.String())
			}
			byIP[ip] = len(out)
			out = append(out, readyAddress{ip: ip, label: label, ports: append([]corev1.EndpointPort(nil), ss.Ports...)})
		}
	}
	slices.SortFunc(out, func(x, y readyAddress) int { return x.ip.Compare(y.ip) })
	return out
}
