package cli

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/gateway/dns"
	"github.com/kubeactor/kubeactor/persistence"
)

// resolvConf is where the DNS server finds its upstream resolvers.
const resolvConf = "/etc/resolv.conf"

// startDNS serves cluster DNS on --dns-bind-address:--dns-port (unless the port is 0)
// and returns the address the kube-system/kube-dns service points at (ok false when
// DNS is not served); the control plane ensures that service (leader.go). Not being
// able to listen (the port is taken, or needs privileges) is logged and leaves the
// server without DNS rather than stopping it. stop shuts the DNS server down.
func startDNS(ctx context.Context, cfg config.Server, store *persistence.Store, log *logrus.Logger) (stop func(), kubeDNS netip.AddrPort, ok bool) {
	none := func() {}
	if cfg.DNSPort == 0 {
		return none, netip.AddrPort{}, false
	}
	// The kube-dns endpoints: --advertise-address, else the bind address, else (bound to
	// every interface) the host's address.
	ep, err := advertised(cfg, &net.UDPAddr{IP: net.ParseIP(cfg.DNSBindAddress), Port: cfg.DNSPort})
	if err != nil {
		log.WithField("error", err).Error("cluster dns not served")
		return none, netip.AddrPort{}, false
	}
	// Never forward to ourselves (directly, or through the kube-dns service).
	skip := []netip.AddrPort{ep, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(cfg.DNSPort))}
	if ip, err := netip.ParseAddr(cfg.DNSBindAddress); err == nil {
		skip = append(skip, netip.AddrPortFrom(ip.Unmap(), uint16(cfg.DNSPort)))
	}
	if ip, err := cfg.ClusterDNSAddress(); err == nil {
		skip = append(skip, netip.AddrPortFrom(ip, 53))
	}
	ctx, cancel := context.WithCancel(ctx)
	table := dns.NewTable()
	dns.Follow(ctx, store, table, log)
	srv, err := dns.Start(cfg.DNSAddress(), dns.Config{Zone: dns.Zone{Domain: cfg.ClusterDomain}, Table: table,
		Upstreams: dns.Upstreams(resolvConf, skip...), Log: log})
	if err != nil {
		cancel()
		log.WithFields(logrus.Fields{"address": cfg.DNSAddress(), "error": err}).Error("cluster dns not served")
		return none, netip.AddrPort{}, false
	}
	stop = func() {
		cancel()
		sctx, done := context.WithTimeout(context.Background(), 2*time.Second)
		defer done()
		if err := srv.Shutdown(sctx); err != nil {
			log.WithField("error", err).Warn("stop dns")
		}
	}
	log.WithFields(logrus.Fields{"address": srv.Addr().String(), "domain": cfg.ClusterDomain, "kube-dns": ep.String()}).Info("serving cluster dns")
	return stop, ep, true
}
