package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
)

// dialTimeouts are the userspace proxy's attempts: each to the next endpoint, with a
// longer timeout.
var dialTimeouts = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}

// DefaultUDPIdleTimeout is how long a UDP client's record (and its socket to the
// chosen endpoint) lives after the last datagram either way.
const DefaultUDPIdleTimeout = 30 * time.Second

// Userspace is the book's userspace proxier: a socket per service port on a random
// port, round robin over the endpoints with ClientIP affinity. TCP connections are
// copied both ways to a connection to the endpoint; UDP datagrams go through a
// per-client socket dialed to the endpoint, and its replies return from the proxy
// socket.
type Userspace struct {
	// UDPIdleTimeout ends a UDP client's record after this long without a datagram
	// either way (DefaultUDPIdleTimeout when zero). Set it before the first Update.
	UDPIdleTimeout time.Duration

	listenIP string
	log      logrus.FieldLogger
	lb       *balancer

	mu      sync.Mutex
	sockets map[ServicePortName]*proxySocket
	wg      sync.WaitGroup
}

// proxySocket is the socket of one service port: a TCP listener or a UDP socket.
type proxySocket struct {
	signature string
	sock      io.Closer
	port      int
	udp       *udpClients // UDP only
}

// NewUserspace returns a proxier whose sockets listen on listenIP ("" or "0.0.0.0":
// all addresses; the book's REDIRECT rules need that).
func NewUserspace(listenIP string, log logrus.FieldLogger) *Userspace {
	if listenIP == "" {
		listenIP = "0.0.0.0"
	}
	return &Userspace{listenIP: listenIP, log: log, lb: newBalancer(), sockets: map[ServicePortName]*proxySocket{}}
}

// Update opens a socket for every new or changed TCP or UDP service port, closes
// those of ports that are gone, hands the endpoints to the balancer and returns the
// proxy port of each service port. Established TCP connections outlive their socket;
// UDP client records end with theirs.
func (u *Userspace) Update(services []corev1.Service, endpoints []corev1.Endpoints) (map[ServicePortName]int, error) {
	ports := servicePorts(services, endpoints)
	u.mu.Lock()
	defer u.mu.Unlock()
	active := map[ServicePortName]bool{}
	out := map[ServicePortName]int{}
	var errs []error
	for _, sp := range ports {
		if sp.protocol != corev1.ProtocolTCP && sp.protocol != corev1.ProtocolUDP {
			continue // SCTP: not in userspace mode
		}
		active[sp.name] = true
		sig := fmt.Sprintf("%s %s:%d node %d", sp.protocol, sp.clusterIP, sp.port, sp.nodePort)
		u.lb.set(sp.name, sp.endpoints, sp.affinity, time.Duration(sp.timeout)*time.Second)
		if s := u.sockets[sp.name]; s != nil && s.signature == sig {
			out[sp.name] = s.port
			continue
		} else if s != nil {
			_ = s.sock.Close()
			delete(u.sockets, sp.name)
		}
		s, err := u.open(sp.name, sp.protocol)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.signature = sig
		u.sockets[sp.name] = s
		out[sp.name] = s.port
		u.log.WithFields(logrus.Fields{"service": sp.name.String(), "protocol": string(sp.protocol), "port": s.port}).Info("proxying for service")
	}
	for name, s := range u.sockets {
		if !active[name] {
			_ = s.sock.Close()
			delete(u.sockets, name)
		}
	}
	u.lb.retain(active)
	u.lb.cleanup(time.Now())
	return out, errors.Join(errs...)
}

// open binds a socket for a service port on a random port and starts its loop.
func (u *Userspace) open(name ServicePortName, proto corev1.Protocol) (*proxySocket, error) {
	addr := net.JoinHostPort(u.listenIP, "0")
	if proto == corev1.ProtocolUDP {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen for %s: %w", name, err)
		}
		idle := u.UDPIdleTimeout
		if idle <= 0 {
			idle = DefaultUDPIdleTimeout
		}
		conn := pc.(*net.UDPConn)
		s := &proxySocket{sock: conn, port: conn.LocalAddr().(*net.UDPAddr).Port, udp: newUDPClients(idle)}
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			u.serveUDP(name, conn, s.udp)
		}()
		return s, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for %s: %w", name, err)
	}
	s := &proxySocket{sock: ln, port: ln.Addr().(*net.TCPAddr).Port}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.serve(name, ln)
	}()
	return s, nil
}

// Close closes every socket and waits for their loops and for the UDP clients'
// relays (not for the TCP connections in flight, which end with their peers).
func (u *Userspace) Close() {
	u.mu.Lock()
	for name, s := range u.sockets {
		_ = s.sock.Close()
		delete(u.sockets, name)
	}
	u.mu.Unlock()
	u.wg.Wait()
}

func (u *Userspace) serve(name ServicePortName, ln net.Listener) {
	for {
		in, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			u.log.WithError(err).WithField("service", name.String()).Warn("accept failed")
			return
		}
		go u.handle(name, in)
	}
}

func (u *Userspace) handle(name ServicePortName, in net.Conn) {
	client, _, _ := net.SplitHostPort(in.RemoteAddr().String())
	out, err := u.connect(name, client)
	if err != nil {
		u.log.WithError(err).WithField("service", name.String()).Warn("no endpoint answered")
		_ = in.Close()
		return
	}
	proxyTCP(in, out)
}

// connect dials the balancer's choice, retrying the next endpoint with a longer
// timeout when one fails.
func (u *Userspace) connect(name ServicePortName, client string) (net.Conn, error) {
	var last error
	for _, timeout := range dialTimeouts {
		ep, err := u.lb.next(name, client, time.Now())
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", ep)
		cancel()
		if err == nil {
			return c, nil
		}
		last = err
		u.lb.forget(name, client)
		u.log.WithError(err).WithFields(logrus.Fields{"service": name.String(), "endpoint": ep}).Warn("dial failed")
	}
	return nil, fmt.Errorf("no endpoint of %s answered: %w", name, last)
}

// proxyTCP copies both ways, half-closing each direction when its source ends.
func proxyTCP(in, out net.Conn) {
	var wg sync.WaitGroup
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
	}
	wg.Add(2)
	go cp(out, in)
	go cp(in, out)
	wg.Wait()
	_ = in.Close()
	_ = out.Close()
}

// Ports returns the proxy port of each service port (for logs and tests).
func (u *Userspace) Ports() map[ServicePortName]int {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[ServicePortName]int, len(u.sockets))
	for n, s := range u.sockets {
		out[n] = s.port
	}
	return out
}
