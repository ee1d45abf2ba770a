package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDockerNodeProvisionsInfraImage: an agent whose pod infra image is not in the
// engine builds it from its own binary (no registry, no `make images`) and runs a
// pod on it. The image has a name of its own so that the tests running beside this
// one keep theirs; it is removed at the end.
func TestDockerNodeProvisionsInfraImage(t *testing.T) {
	image := "kubeactor/pause-selftest:" + randHex(4)
	_ = exec.Command("docker", "rmi", "-f", image).Run()
	if err := exec.Command("docker", "image", "inspect", image).Run(); err == nil {
		t.Fatalf("%s exists before the test", image)
	}
	// Registered before the node's clean-up, so it runs after its containers are gone.
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })

	n := startDockerNode(t, "--pod-infra-container-image", image)
	if !strings.Contains(n.agent.Logs(), "built the pod infra image") {
		t.Errorf("no log line says the image was built:\n%s", n.agent.Logs())
	}
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{json .Config.Entrypoint}} {{len .RootFS.Layers}}", image).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != `["/pause"] 1` {
		t.Fatalf("image %s: %v %s", image, err, out)
	}

	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: selfhosted
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: shell
    image: kubeactor/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 3600"]
`)
	p := n.waitPod("selfhosted", 60*time.Second, "Running", running)
	// The infra container runs the agent's binary as /pause, holding the pod's network.
	ps, err := exec.Command("docker", "ps", "--filter", "label=io.kubernetes.pod.uid="+string(p.UID),
		"--filter", "ancestor="+image, "--format", "{{.Command}} {{.Status}}").CombinedOutput()
	if err != nil || !strings.Contains(string(ps), "/pause") || !strings.Contains(string(ps), "Up") {
		t.Fatalf("infra container of the pod: %v %q", err, ps)
	}
	if p.Status.PodIP == "" {
		t.Errorf("no pod IP: %+v", p.Status)
	}
	// A second agent finds the image and builds nothing.
	n.agent.Stop(t)
	again := startAgent(t, n.s, n.args...)
	Eventually(t, 30*time.Second, "second agent up", func() error {
		if !strings.Contains(again.Logs(), "node registered") {
			return fmt.Errorf("not yet registered")
		}
		return nil
	})
	if strings.Contains(again.Logs(), "built the pod infra image") {
		t.Errorf("the image was built again:\n%s", again.Logs())
	}
}

// TestDockerClusterDNSWithoutFlag: an agent given no --cluster-dns learns the
// kube-system/kube-dns service's cluster IP from the API server and gives it to
// ClusterFirst pods with the cluster's search path; a pod resolves the kubernetes
// service through it. The server's DNS listens on 127.0.0.1, as `kubeactor up`'s
// does (on a free port rather than 53): pods reach it through the agent's service
// proxy.
func TestDockerClusterDNSWithoutFlag(t *testing.T) {
	requireDocker(t)
	port := freeDNSPort(t)
	s := StartServer(t, "", "--dns-bind-address", "127.0.0.1", "--dns-port", fmt.Sprint(port))
	n := startDockerNodeOn(t, s)
	if strings.Contains(strings.Join(n.args, " "), "--cluster-dns") {
		t.Fatal("the agent was given --cluster-dns")
	}
	dnsIP := s.MustKubectl(t, "", "get", "service", "kube-dns", "-n", "kube-system", "-o", "jsonpath={.spec.clusterIP}")
	if dnsIP == "" {
		t.Fatal("no kube-dns service")
	}
	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: dnsclient
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: shell
    image: kubeactor/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 3600"]
`)
	n.waitPod("dnsclient", 60*time.Second, "Running", running)
	resolv := s.MustKubectl(t, "", "exec", "dnsclient", "--", "cat", "/etc/resolv.conf")
	if !strings.Contains(resolv, "nameserver "+dnsIP) || !strings.Contains(resolv, "search default.svc.cluster.local svc.cluster.local cluster.local") {
		t.Fatalf("resolv.conf of a ClusterFirst pod without --cluster-dns:\n%s", resolv)
	}
	Eventually(t, 30*time.Second, "nslookup kubernetes.default.svc.cluster.local", func() error {
		r := s.Kubectl("", "exec", "dnsclient", "--", "nslookup", "kubernetes.default.svc.cluster.local")
		if r.Err != nil || !strings.Contains(r.Stdout, "10.254.0.1") {
			return fmt.Errorf("%v %q %q", r.Err, r.Stdout, r.Stderr)
		}
		return nil
	})
	if !strings.Contains(n.agent.Logs(), `"cluster-dns":"`+dnsIP+`"`) {
		t.Errorf("no log line names the learned cluster DNS server")
	}
}
