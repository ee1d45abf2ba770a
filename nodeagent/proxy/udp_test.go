package proxy

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-iptables/iptables"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

var udpNodePorts atomic.Int32

// startUDPService opens the userspace proxy for a UDP service "default/dns" (port
// 53, a NodePort no earlier test used) over eps and installs its rules. It returns
// the cluster IP and NodePort addresses.
func startUDPService(t *testing.T, us *Userspace, affinity bool, eps []string) []string {
	t.Helper()
	resetTables(t)
	vip := nextVIP()
	nodePort := 31000 + udpNodePorts.Add(1)
	b := newSvc("default", "dns", vip).udp("dns", 53).nodePort(nodePort)
	if affinity {
		b = b.affinity(0)
	}
	svcs := []corev1.Service{b.obj()}
	ports, err := us.Update(svcs, []corev1.Endpoints{newEps("default", "dns", eps, map[string]int32{"dns": testEpPort})})
	if err != nil {
		t.Fatal(err)
	}
	ipt, err := iptables.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewApplier(ipt, "").Apply(UserspaceRules(svcs, ports, NodeInfo{IP: testNodeIP})); err != nil {
		t.Fatal(err)
	}
	return []string{vip + ":53", net.JoinHostPort(testNodeIP, strconv.Itoa(int(nodePort)))}
}

func quietUserspace() *Userspace {
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	return NewUserspace("", log)
}

func dialUDP(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestUserspaceUDPTraffic(t *testing.T) {
	needNetns(t)
	tests := []struct {
		name     string
		affinity bool
		eps      []string
		even     bool // round robin over live endpoints splits evenly
	}{
		{name: "round-robin", eps: []string{testEp1, testEp2}, even: true},
		{name: "client-ip-affinity", affinity: true, eps: []string{testEp1, testEp2}},
		{name: "dead-endpoint-skipped", eps: []string{testEp1, testEp2, testEpDead}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			us := quietUserspace()
			defer us.Close()
			for _, addr := range startUDPService(t, us, tt.affinity, tt.eps) {
				got := map[string]int{}
				for i := range 6 {
					// A new client socket is a new client: the next endpoint.
					c := dialUDP(t, addr)
					first, err := askUDP(c)
					if err != nil {
						t.Fatalf("%s: client %d: %v\n%s", addr, i, err, iptablesSave(t, TableNAT))
					}
					got[first]++
					// The same client socket sticks to its endpoint.
					for j := range 3 {
						if name, err := askUDP(c); err != nil || name != first {
							t.Errorf("%s: client %d datagram %d answered by %q (%v), want %q", addr, i, j, name, err, first)
						}
					}
				}
				checkSpread(t, got, tt.affinity)
				if tt.even && got[testEp1] != got[testEp2] {
					t.Errorf("%s: round robin answered %v, want an even split", addr, got)
				}
			}
		})
	}
}

func TestUserspaceUDPIdleTimeout(t *testing.T) {
	needNetns(t)
	us := quietUserspace()
	us.UDPIdleTimeout = 100 * time.Millisecond
	defer us.Close()
	addr := startUDPService(t, us, false, []string{testEp1, testEp2})[0]
	name := ServicePortName{NamespacedName: types.NamespacedName{Namespace: "default", Name: "dns"}, Port: "dns"}
	c := dialUDP(t, addr)
	var answers []string
	for i := range 3 {
		got, err := askUDP(c)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		answers = append(answers, got)
		if n := us.udpClientCount(name); n != 1 {
			t.Errorf("datagram %d: %d client records, want 1", i, n)
		}
		// Once the record has expired, the same client socket is a new client.
		waitFor(t, "the idle udp client record to expire", func() bool { return us.udpClientCount(name) == 0 })
	}
	for i := 1; i < len(answers); i++ {
		if answers[i] == answers[i-1] {
			t.Errorf("answers %v: after the idle timeout round robin should move to the other endpoint", answers)
		}
	}
}

func TestUserspaceUDPClose(t *testing.T) {
	needNetns(t)
	tests := []struct {
		name  string
		close func(us *Userspace)
	}{
		{name: "service removed", close: func(us *Userspace) {
			if _, err := us.Update(nil, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "proxier closed", close: (*Userspace).Close},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			us := quietUserspace()
			defer us.Close()
			addr := startUDPService(t, us, false, []string{testEp1, testEp2})[0]
			name := ServicePortName{NamespacedName: types.NamespacedName{Namespace: "default", Name: "dns"}, Port: "dns"}
			if _, err := askUDP(dialUDP(t, addr)); err != nil {
				t.Fatal(err)
			}
			if n := us.udpClientCount(name); n != 1 {
				t.Fatalf("%d client records, want 1", n)
			}
			us.mu.Lock()
			clients := us.sockets[name].udp
			us.mu.Unlock()
			tt.close(us)
			if _, ok := us.Ports()[name]; ok {
				t.Errorf("socket of %s still open", name)
			}
			// The socket's loop closes every client record and refuses new ones.
			waitFor(t, "client records closed", func() bool {
				clients.mu.Lock()
				defer clients.mu.Unlock()
				return clients.closed && len(clients.byAddr) == 0
			})
		})
	}
}
