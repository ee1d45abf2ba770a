package actors

import (
	"context"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeactor/kubeactor/persistence"
)

// dnsServiceOptions: the small test range (usable 10.0.0.1-10.0.0.6, .1 for the
// kubernetes service) with .5 kept for kube-dns.
func dnsServiceOptions() ServiceOptions {
	o := testServiceOptions
	o.ClusterDNS = netip.MustParseAddr("10.0.0.5")
	return o
}

func TestKubeDNSService(t *testing.T) {
	tests := []struct {
		name    string
		servers []string // successive addresses the server answers DNS on
	}{
		{"created", []string{"192.168.1.10:53"}},
		{"port and address follow the server", []string{"127.0.0.1:53", "127.0.0.1:10053", "127.0.0.1:10053"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := openControllerStore(t)
			s := startControllers(t, st, nil, NodeOptions{}, dnsServiceOptions())
			for _, server := range tt.servers {
				ap := netip.MustParseAddrPort(server)
				if err := s.EnsureKubeDNSService(ctx, ap); err != nil {
					t.Fatalf("ensure %s: %v", server, err)
				}
				it, err := st.Get(svcKey("kube-system", "kube-dns"))
				if err != nil {
					t.Fatal(err)
				}
				svc := it.Object().(*corev1.Service)
				if svc.Spec.ClusterIP != "10.0.0.5" || len(svc.Spec.Ports) != 2 || svc.Labels["k8s-app"] != "kube-dns" ||
					svc.Spec.Ports[0].Protocol != corev1.ProtocolUDP || svc.Spec.Ports[1].Protocol != corev1.ProtocolTCP ||
					svc.Spec.Ports[0].Port != 53 || svc.Spec.Ports[0].TargetPort.IntValue() != int(ap.Port()) {
					t.Fatalf("kube-dns service %s %v %+v", svc.Spec.ClusterIP, svc.Labels, svc.Spec.Ports)
				}
				it, err = st.Get(persistence.Key{Resource: "endpoints", Namespace: "kube-system", Name: "kube-dns"})
				if err != nil {
					t.Fatal(err)
				}
				ss := it.Object().(*corev1.Endpoints).Subsets
				if len(ss) != 1 || ss[0].Addresses[0].IP != ap.Addr().String() || len(ss[0].Ports) != 2 || ss[0].Ports[0].Port != int32(ap.Port()) {
					t.Fatalf("kube-dns endpoints %+v", ss)
				}
			}
		})
	}
}

// TestClusterDNSReserved: no other service gets the cluster DNS address, asked for or
// allocated, before kube-dns exists, while it does, and after it is deleted.
func TestClusterDNSReserved(t *testing.T) {
	ctx := context.Background()
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, dnsServiceOptions())
	if _, err := createSvc(s, newSvc("early").ip("10.0.0.5").obj()); invalidField(err) != "spec.clusterIP" {
		t.Fatalf("err = %v, want the cluster DNS IP taken", err)
	}
	if err := s.EnsureKubeDNSService(ctx, netip.MustParseAddrPort("127.0.0.1:53")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Delete(ctx, svcKey("kube-system", "kube-dns"), DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "kube-dns deleted", func() bool { return gone(st, svcKey("kube-system", "kube-dns")) })
	// Every other usable address (.2, .3, .4, .6) is handed out; never .5.
	for _, name := range []string{"a", "b", "c", "d"} {
		svc, err := createSvc(s, newSvc(name).obj())
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if svc.Spec.ClusterIP == "10.0.0.5" || svc.Spec.ClusterIP == "10.0.0.1" {
			t.Fatalf("service %s got %s", name, svc.Spec.ClusterIP)
		}
	}
	if _, err := createSvc(s, newSvc("full").obj()); err == nil {
		t.Fatal("a fifth service got an address")
	}
	// kube-dns gets its address back.
	if err := s.EnsureKubeDNSService(ctx, netip.MustParseAddrPort("127.0.0.1:53")); err != nil {
		t.Fatalf("ensure again: %v", err)
	}
}

// TestClusterDNSHeldByAnother: a service that held the cluster DNS address before the
// flag named it keeps it, and kube-dns is refused rather than sharing it.
func TestClusterDNSHeldByAnother(t *testing.T) {
	ctx := context.Background()
	st := openControllerStore(t)
	s := startControllers(t, st, nil, NodeOptions{}, testServiceOptions)
	if _, err := createSvc(s, newSvc("squatter").ip("10.0.0.5").obj()); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s = startControllers(t, st, nil, NodeOptions{}, dnsServiceOptions())
	err := s.EnsureKubeDNSService(ctx, netip.MustParseAddrPort("127.0.0.1:53"))
	if invalidField(err) != "spec.clusterIP" {
		t.Fatalf("ensure kube-dns: %v, want the cluster IP refused", err)
	}
}
