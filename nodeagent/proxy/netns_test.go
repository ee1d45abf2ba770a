package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The kernel tests run the whole test binary again inside a network namespace of its
// own (clone with CLONE_NEWNET), so every iptables call, listener and dial of the
// tests lives there and the host's tables are never touched. The namespace goes away
// with the process.
const netnsEnv = "KUBEACTOR_PROXY_TEST_NETNS"

func TestMain(m *testing.M) {
	if os.Getenv(netnsEnv) == "" {
		cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
		parent, err := os.Readlink("/proc/self/ns/net")
		if err != nil {
			parent = "unknown"
		}
		cmd.Env = append(os.Environ(), netnsEnv+"=1", netnsEnv+"_PARENT="+parent)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		err = cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			os.Exit(0)
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			os.Exit(ee.ExitCode())
		}
		os.Setenv(netnsEnv, "cannot create a network namespace: "+err.Error())
	}
	os.Exit(m.Run())
}

var (
	netnsOnce sync.Once
	netnsErr  error
)

// Addresses of the test namespace: the node and two endpoints on a veth link, and
// a route for the service range.
const (
	testNodeIP = "10.1.0.1"
	testEp1    = "10.1.0.2"
	testEp2    = "10.1.0.3"
	testEpDead = "10.1.0.4" // an address with no listener
	testEpPort = 8080
)

// needNetns skips unless the test runs in its own network namespace, and sets the
// namespace up once: links, addresses and two echo servers that answer their name.
func needNetns(t testing.TB) {
	t.Helper()
	if v := os.Getenv(netnsEnv); v != "1" {
		t.Skip(v)
	}
	self, err := os.Readlink("/proc/self/ns/net")
	if parent := os.Getenv(netnsEnv + "_PARENT"); err != nil || parent == "unknown" || self == parent {
		t.Fatalf("refusing to run outside a private network namespace (%s, parent %s, %v)", self, parent, err)
	}
	netnsOnce.Do(func() {
		for _, c := range [][]string{
			{"link", "set", "lo", "up"},
			{"link", "add", "dummy0", "type", "veth", "peer", "name", "dummy1"},
			{"link", "set", "dummy0", "up"},
			{"link", "set", "dummy1", "up"},
			{"addr", "add", testNodeIP + "/24", "dev", "dummy0"},
			{"addr", "add", testEp1 + "/32", "dev", "dummy0"},
			{"addr", "add", testEp2 + "/32", "dev", "dummy0"},
			{"addr", "add", testEpDead + "/32", "dev", "dummy0"},
			{"route", "add", "10.254.0.0/16", "dev", "dummy0"},
		} {
			if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
				netnsErr = fmt.Errorf("ip %v: %w: %s", c, err, out)
				return
			}
		}
		for _, ip := range []string{testEp1, testEp2} {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(testEpPort)))
			if err != nil {
				netnsErr = err
				return
			}
			go echoName(ln, ip)
			pc, err := net.ListenPacket("udp", net.JoinHostPort(ip, fmt.Sprint(testEpPort)))
			if err != nil {
				netnsErr = err
				return
			}
			go echoNameUDP(pc, ip)
		}
	})
	if netnsErr != nil {
		t.Fatal(netnsErr)
	}
}

// echoName answers every connection with name and closes it.
func echoName(ln net.Listener, name string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = io.WriteString(c, name+"\n")
		_ = c.Close()
	}
}

// echoNameUDP answers every datagram with name.
func echoNameUDP(pc net.PacketConn, name string) {
	buf := make([]byte, 1500)
	for {
		_, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = pc.WriteTo([]byte(name), from)
	}
}

// resetTables removes every rule and user chain of nat and filter in the test
// namespace, and the built-in chains' rules.
func resetTables(t testing.TB) {
	t.Helper()
	for _, table := range []string{TableNAT, TableFilter} {
		for _, op := range []string{"-F", "-X"} {
			if out, err := exec.Command("iptables", "-w", "-t", table, op).CombinedOutput(); err != nil {
				t.Fatalf("iptables -t %s %s: %v: %s", table, op, err, out)
			}
		}
	}
}

func iptablesSave(t testing.TB, table string) string {
	t.Helper()
	out, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
	if err != nil {
		t.Fatalf("iptables-save: %v: %s", err, out)
	}
	return string(out)
}

// ask connects to addr and returns the name the endpoint answers.
func ask(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	return strings.TrimSpace(string(b)), err
}

// askMany connects n times and counts the answers per endpoint.
func askMany(t *testing.T, addr string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := 0; i < n; i++ {
		name, err := ask(addr)
		if err != nil {
			t.Fatalf("connection %d to %s: %v\n%s%s", i, addr, err, iptablesSave(t, TableNAT), iptablesSave(t, TableFilter))
		}
		got[name]++
	}
	return got
}

// askUDP sends a datagram on c and returns the name the endpoint answers, sending
// again when no answer comes (a datagram to a dead endpoint is lost).
func askUDP(c net.Conn) (string, error) {
	buf := make([]byte, 1500)
	var last error
	for range 10 {
		if _, err := c.Write([]byte("who")); err != nil {
			last = err
			continue
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		if err == nil {
			return string(buf[:n]), nil
		}
		last = err
	}
	return "", last
}
