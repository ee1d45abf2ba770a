package e2e

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

const dnsService = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
`

// freeDNSPort returns a port free for both UDP and TCP on the loopback address.
func freeDNSPort(t *testing.T) int {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		_ = pc.Close()
		if err == nil {
			_ = ln.Close()
			return port
		}
	}
	t.Fatal("no port free for both UDP and TCP")
	return 0
}

// lookup asks the server at addr over network and returns the answer's rcode and
// records (A: the address, SRV: "target port").
func lookup(network, addr, name string, qtype uint16) (int, []string, error) {
	c := &mdns.Client{Net: network, Timeout: 5 * time.Second}
	m, _, err := c.Exchange(new(mdns.Msg).SetQuestion(name, qtype), addr)
	if err != nil {
		return 0, nil, err
	}
	var out []string
	for _, rr := range m.Answer {
		switch r := rr.(type) {
		case *mdns.A:
			out = append(out, r.A.String())
		case *mdns.SRV:
			out = append(out, fmt.Sprintf("%s %d", r.Target, r.Port))
		}
	}
	return m.Rcode, out, nil
}

// TestClusterDNS: the server answers for a service created with kubectl, over UDP
// and TCP, in both name forms, and publishes itself as kube-system/kube-dns.
func TestClusterDNS(t *testing.T) {
	port := freeDNSPort(t)
	s := StartServer(t, "", "--dns-port", strconv.Itoa(port))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	s.MustKubectl(t, dnsService, "create", "-f", "-")
	ip := s.MustKubectl(t, "", "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
	if net.ParseIP(ip) == nil {
		t.Fatalf("web has no cluster IP: %q", ip)
	}

	tests := []struct {
		name  string
		qname string
		qtype uint16
		rcode int
		want  string
	}{
		{"service", "web.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, ip},
		{"older form", "web.default.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, ip},
		{"named port", "_http._tcp.web.default.svc.cluster.local.", mdns.TypeSRV, mdns.RcodeSuccess, "web.default.svc.cluster.local. 80"},
		{"kube-dns itself", "kube-dns.kube-system.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, "10.254.0.10"},
		{"kubernetes", "kubernetes.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, "10.254.0.1"},
		{"unknown", "nope.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeNameError, ""},
	}
	for _, tt := range tests {
		for _, network := range []string{"udp", "tcp"} {
			t.Run(tt.name+"/"+network, func(t *testing.T) {
				Eventually(t, 10*time.Second, tt.qname, func() error {
					rcode, got, err := lookup(network, addr, tt.qname, tt.qtype)
					if err != nil {
						return err
					}
					if rcode != tt.rcode || strings.Join(got, ",") != tt.want {
						return fmt.Errorf("rcode %s answers %q, want %s %q", mdns.RcodeToString[rcode], got, mdns.RcodeToString[tt.rcode], tt.want)
					}
					return nil
				})
			})
		}
	}

	// kube-dns: the fixed cluster IP, endpoints at the server's DNS port.
	if got := s.MustKubectl(t, "", "get", "service", "kube-dns", "-n", "kube-system", "-o", "jsonpath={.spec.clusterIP} {.metadata.labels.k8s-app}"); got != "10.254.0.10 kube-dns" {
		t.Errorf("kube-dns service: %q", got)
	}
	if got := s.MustKubectl(t, "", "get", "endpoints", "kube-dns", "-n", "kube-system", "-o", "jsonpath={.subsets[0].addresses[0].ip} {.subsets[0].ports[*].port}"); got != fmt.Sprintf("127.0.0.1 %d %d", port, port) {
		t.Errorf("kube-dns endpoints: %q", got)
	}
	// Nobody else gets the DNS address.
	if r := s.Kubectl(strings.Replace(dnsService, "name: web", "name: thief", 1)+"  clusterIP: 10.254.0.10\n", "create", "-f", "-"); r.Err == nil {
		t.Errorf("a service took the cluster DNS address: %s", r.Stdout)
	}

	// A deleted service's name goes away.
	s.MustKubectl(t, "", "delete", "service", "web")
	Eventually(t, 10*time.Second, "web gone from DNS", func() error {
		rcode, _, err := lookup("udp", addr, "web.default.svc.cluster.local.", mdns.TypeA)
		if err != nil {
			return err
		}
		if rcode != mdns.RcodeNameError {
			return errors.New("still answered")
		}
		return nil
	})
}

// TestNodePodCIDR: a node registered without a pod CIDR gets the next /24 of the
// cluster CIDR, and keeps it across a restart, which hands out no CIDR twice.
func TestNodePodCIDR(t *testing.T) {
	const node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
	dir := t.TempDir()
	s := StartServer(t, dir, "--dns-port", "0")
	cidr := func(name string) string {
		return s.MustKubectl(t, "", "get", "node", name, "-o", "jsonpath={.spec.podCIDR}")
	}
	s.MustKubectl(t, fmt.Sprintf(node, "n1"), "create", "-f", "-")
	s.MustKubectl(t, fmt.Sprintf(node, "n2"), "create", "-f", "-")
	if a, b := cidr("n1"), cidr("n2"); a != "10.244.0.0/24" || b != "10.244.1.0/24" {
		t.Fatalf("pod CIDRs %q %q", a, b)
	}
	s.Stop()
	s = StartServer(t, dir, "--dns-port", "0")
	s.MustKubectl(t, fmt.Sprintf(node, "n3"), "create", "-f", "-")
	if got := cidr("n3"); got != "10.244.2.0/24" {
		t.Fatalf("after restart: n3 pod CIDR %q", got)
	}
}
