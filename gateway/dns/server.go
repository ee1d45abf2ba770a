package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/sirupsen/logrus"
)

// DefaultForwardTimeout bounds one upstream exchange when Config.ForwardTimeout is 0.
const DefaultForwardTimeout = 2 * time.Second

// Config configures a Server.
type Config struct {
	Zone  Zone
	Table *Table
	// Upstreams are the resolvers ("host:port") asked, in order, for names outside
	// the cluster domain; with none, such questions are answered REFUSED. When every
	// one fails the answer is SERVFAIL.
	Upstreams      []string
	ForwardTimeout time.Duration
	Log            logrus.FieldLogger
}

// Server answers DNS over UDP and TCP on one address.
type Server struct {
	cfg      Config
	addr     netip.AddrPort
	udp, tcp *mdns.Server
}

// Start listens on addr ("host:port"; port 0 picks a free port, the same for UDP
// and TCP) and serves until Shutdown.
func Start(addr string, cfg Config) (*Server, error) {
	if cfg.Table == nil {
		return nil, errors.New("dns: no table")
	}
	if cfg.ForwardTimeout <= 0 {
		cfg.ForwardTimeout = DefaultForwardTimeout
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	pc, ln, err := listen(addr)
	if err != nil {
		return nil, err
	}
	ap, err := netip.ParseAddrPort(pc.LocalAddr().String())
	if err != nil {
		_, _ = pc.Close(), ln.Close()
		return nil, fmt.Errorf("dns: listening address: %w", err)
	}
	s := &Server{cfg: cfg, addr: ap}
	started := make(chan struct{}, 2)
	notify := func() { started <- struct{}{} }
	s.udp = &mdns.Server{PacketConn: pc, Handler: s, NotifyStartedFunc: notify}
	s.tcp = &mdns.Server{Listener: ln, Handler: s, NotifyStartedFunc: notify}
	for _, srv := range []*mdns.Server{s.udp, s.tcp} {
		go func() {
			if err := srv.ActivateAndServe(); err != nil {
				cfg.Log.WithField("error", err).Error("dns serve")
			}
		}()
	}
	<-started
	<-started
	return s, nil
}

// listen binds UDP and TCP on the same port.
func listen(addr string) (net.PacketConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("dns: address %q: %w", addr, err)
	}
	for attempt := 0; ; attempt++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("dns: listen udp %s: %w", addr, err)
		}
		_, bound, _ := net.SplitHostPort(pc.LocalAddr().String())
		ln, err := net.Listen("tcp", net.JoinHostPort(host, bound))
		if err == nil {
			return pc, ln, nil
		}
		_ = pc.Close()
		if port != "0" || attempt == 10 { // a free UDP port may be a taken TCP one: try another
			return nil, nil, fmt.Errorf("dns: listen tcp %s: %w", net.JoinHostPort(host, bound), err)
		}
	}
}

// Addr is the address the server listens on, UDP and TCP.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Shutdown stops both listeners.
func (s *Server) Shutdown(ctx context.Context) error {
	return errors.Join(s.udp.ShutdownContext(ctx), s.tcp.ShutdownContext(ctx))
}

// ServeDNS answers one query: from the table, or through the upstreams.
func (s *Server) ServeDNS(w mdns.ResponseWriter, req *mdns.Msg) {
	_, tcp := w.LocalAddr().(*net.TCPAddr)
	r := Answer(req, s.cfg.Zone, s.cfg.Table)
	msg := r.Msg
	if r.Forward {
		msg = s.forward(req, tcp)
	}
	if !tcp {
		size := mdns.MinMsgSize
		if opt := req.IsEdns0(); opt != nil {
			size = max(int(opt.UDPSize()), size)
		}
		msg.Truncate(size)
	}
	if err := w.WriteMsg(msg); err != nil {
		s.cfg.Log.WithField("error", err).Debug("dns write")
	}
}

// forward asks the upstreams in turn, over the transport the question came by.
func (s *Server) forward(req *mdns.Msg, tcp bool) *mdns.Msg {
	resp := new(mdns.Msg)
	if len(s.cfg.Upstreams) == 0 {
		return resp.SetRcode(req, mdns.RcodeRefused)
	}
	c := &mdns.Client{Net: "udp", Timeout: s.cfg.ForwardTimeout}
	if tcp {
		c.Net = "tcp"
	}
	for _, up := range s.cfg.Upstreams {
		in, _, err := c.Exchange(req, up)
		if err == nil {
			return in
		}
		s.cfg.Log.WithFields(logrus.Fields{"upstream": up, "error": err}).Debug("dns forward")
	}
	return resp.SetRcode(req, mdns.RcodeServerFailure)
}

// Upstreams reads the nameservers of a resolv.conf file ("host:port"), leaving out
// the addresses in skip (the server's own, which would loop). A missing file gives
// none.
func Upstreams(resolvConf string, skip ...netip.AddrPort) []string {
	cc, err := mdns.ClientConfigFromFile(resolvConf)
	if err != nil {
		return nil
	}
	port, err := strconv.Atoi(cc.Port)
	if err != nil {
		port = 53
	}
	var out []string
	for _, ns := range cc.Servers {
		ip, err := netip.ParseAddr(ns)
		ap := netip.AddrPortFrom(ip.Unmap(), uint16(port))
		if err != nil || slices.Contains(skip, ap) {
			continue
		}
		out = append(out, ap.String())
	}
	return out
}
