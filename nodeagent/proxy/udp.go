package proxy

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
)

// maxDatagram is the largest UDP payload the proxy forwards.
const maxDatagram = 65535

// udpClients are the "connections" of one UDP service port: for each client address,
// a socket dialed to the endpoint the balancer chose for it.
type udpClients struct {
	idle time.Duration

	mu     sync.Mutex
	byAddr map[string]*udpClient
	closed bool
}

type udpClient struct {
	key  string
	conn *net.UDPConn
	last time.Time // last datagram either way; guarded by udpClients.mu
}

func newUDPClients(idle time.Duration) *udpClients {
	return &udpClients{idle: idle, byAddr: map[string]*udpClient{}}
}

// touch returns the client's record, marked as used now; nil when there is none.
func (cs *udpClients) touch(key string, now time.Time) *udpClient {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.byAddr[key]
	if c != nil {
		c.last = now
	}
	return c
}

// used marks c as used at now.
func (cs *udpClients) used(c *udpClient, now time.Time) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c.last = now
}

// add records a new client; false when the service port's socket is closed.
func (cs *udpClients) add(c *udpClient) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return false
	}
	cs.byAddr[c.key] = c
	return true
}

// expired reports whether c has been idle for the idle timeout at now, and removes
// it if so; otherwise it returns when that would next be.
func (cs *udpClients) expired(c *udpClient, now time.Time) (bool, time.Time) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if until := c.last.Add(cs.idle); now.Before(until) && !cs.closed {
		return false, until
	}
	cs.removeLocked(c)
	return true, time.Time{}
}

func (cs *udpClients) remove(c *udpClient) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.removeLocked(c)
}

func (cs *udpClients) removeLocked(c *udpClient) {
	if cs.byAddr[c.key] == c {
		delete(cs.byAddr, c.key)
	}
}

// closeAll closes every client's socket (ending its relay) and refuses new ones.
func (cs *udpClients) closeAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for k, c := range cs.byAddr {
		_ = c.conn.Close()
		delete(cs.byAddr, k)
	}
}

func (cs *udpClients) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.byAddr)
}

// serveUDP reads the datagrams of a UDP service port and forwards each to its
// client's endpoint, opening a client record for a new client address. It ends, with
// every client record, when the socket is closed.
func (u *Userspace) serveUDP(name ServicePortName, pc *net.UDPConn, clients *udpClients) {
	defer clients.closeAll()
	log := u.log.WithField("service", name.String())
	buf := make([]byte, maxDatagram)
	for {
		n, cli, err := pc.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.WithError(err).Warn("udp read failed")
			continue
		}
		c := clients.touch(cli.String(), time.Now())
		if c == nil {
			if c, err = u.newUDPClient(name, pc, clients, cli); err != nil {
				log.WithError(err).WithField("client", cli.String()).Warn("no endpoint for udp client")
				continue
			}
		}
		if _, err := c.conn.Write(buf[:n]); err != nil {
			log.WithError(err).WithField("client", cli.String()).Debug("udp forward failed")
		}
	}
}

// newUDPClient dials the balancer's choice for cli and starts relaying its replies.
func (u *Userspace) newUDPClient(name ServicePortName, pc *net.UDPConn, clients *udpClients, cli *net.UDPAddr) (*udpClient, error) {
	clientIP := cli.IP.String()
	var last error
	for range dialTimeouts {
		ep, err := u.lb.next(name, clientIP, time.Now())
		if err != nil {
			return nil, err
		}
		raddr, err := net.ResolveUDPAddr("udp", ep)
		if err == nil {
			var conn *net.UDPConn
			if conn, err = net.DialUDP("udp", nil, raddr); err == nil {
				c := &udpClient{key: cli.String(), conn: conn, last: time.Now()}
				if !clients.add(c) {
					_ = conn.Close()
					return nil, net.ErrClosed
				}
				u.wg.Add(1)
				go func() {
					defer u.wg.Done()
					u.relayUDP(name, pc, clients, c, cli)
				}()
				return c, nil
			}
		}
		last = err
		u.lb.forget(name, clientIP)
	}
	return nil, fmt.Errorf("no endpoint of %s reachable: %w", name, last)
}

// relayUDP sends the endpoint's replies to the client from the service port's socket
// until the client has been idle for the idle timeout, the endpoint refuses (its
// port is closed: the client's next datagram picks another endpoint) or the
// service port's socket closes.
func (u *Userspace) relayUDP(name ServicePortName, pc *net.UDPConn, clients *udpClients, c *udpClient, cli *net.UDPAddr) {
	defer func() { _ = c.conn.Close() }()
	buf := make([]byte, maxDatagram)
	deadline := time.Now().Add(clients.idle)
	for {
		_ = c.conn.SetReadDeadline(deadline)
		n, err := c.conn.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				var done bool
				if done, deadline = clients.expired(c, time.Now()); done {
					return
				}
				continue
			}
			clients.remove(c)
			if errors.Is(err, syscall.ECONNREFUSED) {
				u.lb.forget(name, cli.IP.String())
				u.log.WithFields(logrus.Fields{"service": name.String(), "endpoint": c.conn.RemoteAddr().String()}).Warn("udp endpoint refused")
			}
			return
		}
		clients.used(c, time.Now())
		if _, err := pc.WriteToUDP(buf[:n], cli); errors.Is(err, net.ErrClosed) {
			return
		}
	}
}

// udpClientCount is the number of live client records of a UDP service port (for
// tests).
func (u *Userspace) udpClientCount(name ServicePortName) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s := u.sockets[name]; s != nil && s.udp != nil {
		return s.udp.len()
	}
	return 0
}
