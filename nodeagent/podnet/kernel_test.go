package podnet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/kubeactor/kubeactor/internal/poll"
)

// The tests in this file use the real kernel and the local Docker engine. Two
// network namespaces play two hosts joined by a veth pair (their "physical"
// network); pods are pause containers started with network mode "none".

const (
	pauseImage  = "kubeactor/pause:latest"
	serverImage = "kubeactor/testserver:latest"
)

// requireKernel skips the test unless it can create namespaces and run containers.
func requireKernel(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("real kernel test")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, bin := range []string{"ip", "docker"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s", bin)
		}
	}
	for _, img := range []string{pauseImage, serverImage} {
		if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
			t.Skipf("needs image %s (images/build.sh)", img)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// host is a network namespace standing for a node.
type host struct {
	ns   string // name under /var/run/netns
	ip   string
	cidr string
}

func (h host) path() string { return "/var/run/netns/" + h.ns }

// twoHosts creates two namespaces joined by a veth pair on 192.168.250.0/24.
func twoHosts(t *testing.T) (host, host) {
	t.Helper()
	id := strconv.Itoa(os.Getpid())
	h1 := host{ns: "kbpn1-" + id, ip: "192.168.250.1", cidr: "10.244.1.0/24"}
	h2 := host{ns: "kbpn2-" + id, ip: "192.168.250.2", cidr: "10.244.2.0/24"}
	for _, h := range []host{h1, h2} {
		run(t, "ip", "netns", "add", h.ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", h.ns).Run() })
	}
	run(t, "ip", "link", "add", "name", "uplink", "netns", h1.ns, "type", "veth", "peer", "name", "uplink", "netns", h2.ns)
	for _, h := range []host{h1, h2} {
		run(t, "ip", "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "uplink")
		run(t, "ip", "-n", h.ns, "link", "set", "uplink", "up")
		run(t, "ip", "-n", h.ns, "link", "set", "lo", "up")
	}
	return h1, h2
}

// container runs a detached container and removes it at cleanup.
func container(t *testing.T, args ...string) (id string, pid int) {
	t.Helper()
	id = run(t, "docker", append([]string{"run", "-d", "--label", "kubeactor-podnet-test=1"}, args...)...)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	pid, err := strconv.Atoi(run(t, "docker", "inspect", "-f", "{{.State.Pid}}", id))
	if err != nil || pid == 0 {
		t.Fatalf("pid of %s: %d %v", id, pid, err)
	}
	return id, pid
}

func pause(t *testing.T) (string, int) {
	return container(t, "--network", "none", pauseImage)
}

func newBridge(t *testing.T, h host) *Bridge {
	t.Helper()
	b, err := New(Config{PodCIDR: h.cidr, NetNS: h.path()})
	if err != nil {
		t.Fatalf("New on %s: %v", h.ns, err)
	}
	t.Cleanup(b.Close)
	return b
}

// dialFrom opens a TCP connection from inside the network namespace of pid.
func dialFrom(pid int, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	res := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			res <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := netns.GetFromPid(pid)
		if err != nil {
			runtime.UnlockOSThread()
			res <- result{err: err}
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			runtime.UnlockOSThread()
			res <- result{err: err}
			return
		}
		conn, derr := net.DialTimeout("tcp", addr, 2*time.Second)
		if err := netns.Set(orig); err != nil {
			// The thread stays locked and dies with this goroutine.
			res <- result{conn: conn, err: errors.Join(derr, err)}
			return
		}
		runtime.UnlockOSThread()
		res <- result{conn: conn, err: derr}
	}()
	r := <-res
	return r.conn, r.err
}

// echoFrom asks the testserver at addr for /echo?msg=msg from the pod of pid.
func echoFrom(pid int, addr, msg string) (string, error) {
	conn, err := dialFrom(pid, addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET /echo?msg=%s HTTP/1.0\r\nHost: %s\r\n\r\n", msg, addr); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	return strings.TrimSpace(string(body)), nil
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, cond)
}

// hostVeths lists the veths on the bridge of a host namespace.
func hostVeths(t *testing.T, h host) []string {
	t.Helper()
	out := run(t, "ip", "-n", h.ns, "-o", "link", "show", "master", DefaultBridgeName)
	var names []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		names = append(names, strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0])
	}
	return names
}

func TestTwoHostsDirectRouting(t *testing.T) {
	requireKernel(t)
	h1, h2 := twoHosts(t)
	b1, b2 := newBridge(t, h1), newBridge(t, h2)
	routes := []Route{{PodCIDR: h1.cidr, NodeIP: h1.ip}, {PodCIDR: h2.cidr, NodeIP: h2.ip}}
	for _, b := range []*Bridge{b1, b2} {
		if err := b.SyncRoutes(routes); err != nil {
			t.Fatalf("SyncRoutes: %v", err)
		}
	}
	for _, b := range []*Bridge{b1, b2, b1} { // twice on host1: idempotent
		if err := b.SyncFirewall("10.244.0.0/16"); err != nil {
			t.Fatalf("SyncFirewall: %v", err)
		}
	}
	rules := run(t, "ip", "netns", "exec", h1.ns, "iptables-save")
	for _, want := range []string{
		"-A FORWARD -j " + forwardChain,
		"-A POSTROUTING -j " + natChain,
		"-A " + natChain + " -s 10.244.1.0/24 ! -d 10.244.0.0/16",
		"-A " + forwardChain + " -s 10.244.1.0/24",
	} {
		if n := strings.Count(rules, want); n != 1 {
			t.Fatalf("%q appears %d times in host1's rules:\n%s", want, n, rules)
		}
	}
	if got := run(t, "ip", "-n", h1.ns, "route", "show", "proto", strconv.Itoa(RouteProtocol)); !strings.Contains(got, "10.244.2.0/24 via 192.168.250.2") {
		t.Fatalf("host1 routes of ours: %q", got)
	}
	if got := run(t, "ip", "netns", "exec", h1.ns, "cat", "/proc/sys/net/ipv4/ip_forward"); got != "1" {
		t.Fatalf("ip_forward on host1 = %q", got)
	}

	_, pidA := pause(t) // host1
	serverPod, pidB := pause(t)
	_, pidC := pause(t) // host2, same host as the server
	ipA, err := b1.SetUpPod("default/a", pidA)
	if err != nil {
		t.Fatal(err)
	}
	ipB, err := b2.SetUpPod("default/b", pidB)
	if err != nil {
		t.Fatal(err)
	}
	ipC, err := b2.SetUpPod("default/c", pidC)
	if err != nil {
		t.Fatal(err)
	}
	if ipA != "10.244.1.2" || ipB != "10.244.2.2" || ipC != "10.244.2.3" {
		t.Fatalf("pod IPs = %s %s %s, want 10.244.1.2 10.244.2.2 10.244.2.3", ipA, ipB, ipC)
	}
	if got, err := b2.PodIP(pidB); err != nil || got != ipB {
		t.Fatalf("PodIP(b) = %q, %v; want %s", got, err, ipB)
	}
	serverID, _ := container(t, "--network", "container:"+serverPod, serverImage)
	server := net.JoinHostPort(ipB, "8080")

	tests := []struct {
		name   string
		pid    int
		fromIP string
	}{
		{name: "pod to pod across hosts", pid: pidA, fromIP: ipA},
		{name: "pod to pod on one host", pid: pidC, fromIP: ipC},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := fmt.Sprintf("hello-%d-%d", os.Getpid(), i)
			eventually(t, "echo from "+tt.fromIP, func() error {
				got, err := echoFrom(tt.pid, server, msg)
				if err == nil && got != msg {
					err = fmt.Errorf("echo = %q, want %q", got, msg)
				}
				return err
			})
			// The server saw the caller's own pod IP: no NAT on the way.
			want := "testserver: " + tt.fromIP + ":"
			eventually(t, "server log", func() error {
				logs := run(t, "docker", "logs", serverID)
				for _, line := range strings.Split(logs, "\n") {
					if strings.Contains(line, msg) && strings.HasPrefix(line, want) {
						return nil
					}
				}
				return fmt.Errorf("no line with %q and %q in:\n%s", want, msg, logs)
			})
		})
	}

	t.Run("restart keeps the bridge, the addresses and the veths", func(t *testing.T) {
		index := run(t, "ip", "netns", "exec", h1.ns, "cat", "/sys/class/net/kbr0/ifindex")
		again := newBridge(t, h1)
		if got := run(t, "ip", "netns", "exec", h1.ns, "cat", "/sys/class/net/kbr0/ifindex"); got != index {
			t.Fatalf("bridge recreated: ifindex %s, was %s", got, index)
		}
		again.Restore(map[string]int{"default/a": pidA})
		ip, err := again.SetUpPod("default/a", pidA)
		if err != nil || ip != ipA {
			t.Fatalf("SetUpPod again = %q, %v; want %s", ip, err, ipA)
		}
		if got := hostVeths(t, h1); len(got) != 1 || got[0] != HostVethName("default/a") {
			t.Fatalf("veths on host1 = %v, want only %s", got, HostVethName("default/a"))
		}
		_, pidD := pause(t)
		ipD, err := again.SetUpPod("default/d", pidD)
		if err != nil || ipD != "10.244.1.3" {
			t.Fatalf("new pod after restore = %q, %v; want 10.244.1.3", ipD, err)
		}
		// The pod keeps its connectivity through the adopted bridge.
		eventually(t, "echo after restart", func() error {
			_, err := echoFrom(pidA, server, "after-restart")
			return err
		})
	})

	t.Run("teardown removes the veth and frees the address", func(t *testing.T) {
		if err := b2.TearDownPod("default/c", pidC); err != nil {
			t.Fatal(err)
		}
		if got := hostVeths(t, h2); len(got) != 1 || got[0] != HostVethName("default/b") {
			t.Fatalf("veths on host2 = %v, want only %s", got, HostVethName("default/b"))
		}
		if _, err := b2.PodIP(pidC); err == nil {
			t.Fatal("pod c still has an eth0")
		}
		if err := b2.TearDownPod("default/c", 0); err != nil {
			t.Fatalf("second teardown: %v", err)
		}
		ip, err := b2.SetUpPod("default/c2", pidC)
		if err != nil || ip != ipC {
			t.Fatalf("freed address not reused: %q, %v; want %s", ip, err, ipC)
		}
	})

	t.Run("set up twice keeps the address and the veth", func(t *testing.T) {
		ip, err := b2.SetUpPod("default/b", pidB)
		if err != nil || ip != ipB {
			t.Fatalf("SetUpPod again = %q, %v; want %s", ip, err, ipB)
		}
		if got := hostVeths(t, h2); len(got) != 2 {
			t.Fatalf("veths on host2 = %v, want 2", got)
		}
	})

	t.Run("a restarted infra container is wired again with the same address", func(t *testing.T) {
		before, err := b2.PodIP(pidC)
		if err != nil {
			t.Fatal(err)
		}
		_, pidNew := pause(t)
		ip, err := b2.SetUpPod("default/c2", pidNew)
		if err != nil || ip != before {
			t.Fatalf("SetUpPod in the new sandbox = %q, %v; want %s", ip, err, before)
		}
		if _, err := b2.PodIP(pidC); err == nil {
			t.Fatal("the old sandbox still has an eth0")
		}
		if got := hostVeths(t, h2); len(got) != 2 {
			t.Fatalf("veths on host2 = %v, want 2", got)
		}
		eventually(t, "echo from the new sandbox", func() error {
			_, err := echoFrom(pidNew, server, "new-sandbox")
			return err
		})
	})

	t.Run("routes of gone nodes are removed, foreign routes kept", func(t *testing.T) {
		run(t, "ip", "-n", h1.ns, "route", "add", "10.99.0.0/24", "via", h2.ip)
		if err := b1.SyncRoutes(nil); err != nil {
			t.Fatal(err)
		}
		got := run(t, "ip", "-n", h1.ns, "route", "show")
		if strings.Contains(got, "10.244.2.0/24") || !strings.Contains(got, "10.99.0.0/24 via 192.168.250.2") {
			t.Fatalf("host1 routes after sync with no nodes:\n%s", got)
		}
	})
}
