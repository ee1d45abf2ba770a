package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// cluster is a server and several Docker agents, each agent in a network namespace
// of its own: hosts on one machine. The namespaces hang off a bridge in the root
// namespace (192.168.<n>.254/24, where the server listens); each host has its
// address on it (192.168.<n>.<i>), its own pod bridge for the pod CIDR the server
// gave its node, and routes to the other hosts' pod CIDRs.
type cluster struct {
	t      testing.TB
	s      *Server
	cs     kubernetes.Interface
	id     string
	subnet string // "192.168.<n>"
	hosts  []*host
}

type host struct {
	name    string // node name and network namespace
	ip      string
	agent   *Agent
	program string   // ip, or nsenter (clusterOptions.sharedMounts)
	args    []string // its arguments that start the agent
}

// restartAgent kills the host's agent (SIGKILL, as a crash) and starts it again.
func (c *cluster) restartAgent(h *host) {
	h.agent.Kill()
	h.agent = startProcess(c.t, h.program, h.args...)
}

// ip runs `ip args...` and fails the test on error.
func runIP(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// startCluster starts a server and n agents as hosts, with extra agent flags.
func startCluster(t testing.TB, n int, extra ...string) *cluster {
	t.Helper()
	return startClusterWith(t, n, clusterOptions{}, extra...)
}

// clusterOptions change startCluster's hosts.
type clusterOptions struct {
	server []string // extra server flags
	// sharedMounts runs the agents in their network namespace only (nsenter), not in
	// a mount namespace of their own (ip netns exec): the tmpfs of secret volumes
	// must be seen by the Docker engine.
	sharedMounts bool
}

// startClusterWith is startCluster with options.
func startClusterWith(t testing.TB, n int, o clusterOptions, extra ...string) *cluster {
	t.Helper()
	requireDocker(t)
	id := randHex(2)
	c := &cluster{t: t, id: id, subnet: fmt.Sprintf("192.168.%d", 100+int(id[0])%100)}
	bridge := "kae" + id
	runIP(t, "link", "add", bridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	runIP(t, "addr", "add", c.subnet+".254/24", "dev", bridge)
	runIP(t, "link", "set", bridge, "up")
	// Bridged traffic passes the root namespace's FORWARD chain, whose policy the
	// Docker engine sets to DROP: let the hosts talk to each other.
	accept := []string{"FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT", "-m", "comment", "--comment", "kubeactor e2e hosts"}
	if out, err := exec.Command("iptables", append([]string{"-I"}, accept...)...).CombinedOutput(); err != nil {
		t.Fatalf("iptables: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("iptables", append([]string{"-D"}, accept...)...).Run() })

	c.s = StartServer(t, "", append([]string{"--insecure-bind-address", "0.0.0.0", "--advertise-address", c.subnet + ".254",
		"--dns-bind-address", c.subnet + ".254", "--dns-port", "53"}, o.server...)...)
	port := c.s.URL[strings.LastIndex(c.s.URL, ":")+1:]
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: c.s.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	c.cs = cs
	for i := 1; i <= n; i++ {
		h := &host{name: fmt.Sprintf("kah%s-%d", id, i), ip: fmt.Sprintf("%s.%d", c.subnet, i)}
		veth := fmt.Sprintf("kav%s%d", id, i)
		runIP(t, "netns", "add", h.name)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", h.name).Run() })
		runIP(t, "link", "add", veth, "type", "veth", "peer", "name", veth+"p")
		runIP(t, "link", "set", veth, "master", bridge, "up")
		runIP(t, "link", "set", veth+"p", "netns", h.name)
		runIP(t, "-n", h.name, "link", "set", veth+"p", "name", "eth0")
		runIP(t, "-n", h.name, "addr", "add", h.ip+"/24", "dev", "eth0")
		runIP(t, "-n", h.name, "link", "set", "eth0", "up")
		runIP(t, "-n", h.name, "link", "set", "lo", "up")
		runIP(t, "-n", h.name, "route", "add", "default", "via", c.subnet+".254")
		node := &dockerNode{t: t, name: h.name}
		t.Cleanup(node.removeContainers)
		h.program, h.args = "ip", []string{"netns", "exec", h.name}
		if o.sharedMounts {
			h.program, h.args = "nsenter", []string{"--net=/run/netns/" + h.name}
		}
		args := append(append(h.args, Binary(t), "agent",
			"--server", "http://"+c.subnet+".254:"+port, "--log-format", "json",
			"--node-name", h.name, "--node-ip", h.ip, "--network-plugin", "bridge",
			"--root-dir", t.TempDir(), "--node-status-update-frequency", "1s", "--sync-frequency", "2s",
			"--cluster-dns", "10.254.0.10"), extra...)
		h.args = args
		h.agent = startProcess(t, h.program, args...)
		t.Cleanup(func() {
			if t.Failed() {
				out, _ := exec.Command("ip", "netns", "exec", h.name, "iptables-save").CombinedOutput()
				routes, _ := exec.Command("ip", "-n", h.name, "route").CombinedOutput()
				t.Logf("%s iptables:\n%s\nroutes:\n%s", h.name, out, routes)
			}
		})
		c.hosts = append(c.hosts, h)
	}
	for _, h := range c.hosts {
		Eventually(t, 60*time.Second, "node "+h.name+" Ready", func() error {
			node, err := cs.CoreV1().Nodes().Get(context.Background(), h.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && node.Spec.PodCIDR != "" {
					return nil
				}
			}
			return fmt.Errorf("node %s not Ready with a pod CIDR", h.name)
		})
	}
	return c
}

// startProcess runs a long-lived program as an Agent (its log kept, stopped at the
// end of the test).
func startProcess(t testing.TB, program string, args ...string) *Agent {
	t.Helper()
	a := &Agent{done: make(chan struct{})}
	a.cmd = exec.Command(program, args...)
	stderr, err := a.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.file = runLogFile(t, processKind(program, args))
	if a.file != nil {
		a.cmd.Stdout = a.file
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", program, err)
	}
	logged := make(chan struct{})
	go func() { a.readLogs(stderr); close(logged) }()
	go func() {
		_ = a.cmd.Wait()
		<-logged
		if a.file != nil {
			_ = a.file.Close()
		}
		close(a.done)
	}()
	t.Cleanup(func() {
		a.Stop(t)
		if t.Failed() {
			t.Logf("%s %s log:\n%s", program, strings.Join(args, " "), a.Logs())
		}
	})
	return a
}

const netPods = `apiVersion: v1
kind: Pod
metadata:
  name: server
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  containers:
  - name: app
    image: kubeactor/testserver:latest
---
apiVersion: v1
kind: Pod
metadata:
  name: client
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  containers:
  - name: shell
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "sleep 3600"]
---
apiVersion: v1
kind: Pod
metadata:
  name: neighbour
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  containers:
  - name: shell
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "sleep 3600"]
`

// TestPodNetworkAcrossNodes: with two agents as two hosts, each pod gets an IP from
// its node's pod CIDR, and a pod reaches a pod on the other node (and one on its own
// node) by its pod IP, the server seeing the caller's real IP.
func TestPodNetworkAcrossNodes(t *testing.T) {
	c := startCluster(t, 2)
	h1, h2 := c.hosts[0].name, c.hosts[1].name
	c.s.MustKubectl(t, fmt.Sprintf(netPods, h2, h1, h2), "create", "-f", "-")
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"server", "client", "neighbour"} {
		n := &dockerNode{t: t, s: c.s, cs: c.cs}
		pods[name] = n.waitPod(name, 90*time.Second, "Running", running)
	}
	for name, p := range pods {
		node, err := c.cs.CoreV1().Nodes().Get(context.Background(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !cidrContains(node.Spec.PodCIDR, p.Status.PodIP) {
			t.Errorf("pod %s has IP %s outside its node's pod CIDR %s", name, p.Status.PodIP, node.Spec.PodCIDR)
		}
	}
	target := "http://" + pods["server"].Status.PodIP + ":8080/echo?msg=hi"
	for _, from := range []string{"client", "neighbour"} {
		Eventually(t, 30*time.Second, from+" reaches the server pod", func() error {
			r := c.s.Kubectl("", "exec", from, "--", "wget", "-qO-", target)
			if r.Err != nil || strings.TrimSpace(r.Stdout) != "hi" {
				return fmt.Errorf("wget: %v %q %q", r.Err, r.Stdout, r.Stderr)
			}
			return nil
		})
		Eventually(t, 10*time.Second, "the server saw "+from+"'s pod IP", func() error {
			logs := c.s.MustKubectl(t, "", "logs", "server")
			if !strings.Contains(logs, "testserver: "+pods[from].Status.PodIP+":") {
				return fmt.Errorf("server log:\n%s", logs)
			}
			return nil
		})
	}
}

func cidrContains(cidr, ip string) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(ip)
	return err == nil && p.Contains(a)
}
