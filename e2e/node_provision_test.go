package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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

// TestDockerManifestURLWithoutRegistering: an agent started with
// --register-node=false and --manifest-url creates no Node, runs the static pod the
// URL serves (its mirror pod on the server) and a pod bound to its name, and posts
// the node's status once the node is created by hand, as in the book's manual
// registration.
func TestDockerManifestURLWithoutRegistering(t *testing.T) {
	requireDocker(t)
	manifest := `apiVersion: v1
kind: Pod
metadata:
  name: fromurl
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: web
    image: kubeactor/testserver:latest
    imagePullPolicy: IfNotPresent
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, manifest) }))
	t.Cleanup(srv.Close)
	s := StartServer(t, "")
	name := "e2e-" + randHex(4)
	n := &dockerNode{t: t, s: s, name: name, root: t.TempDir()}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	n.cs = cs
	n.args = []string{"--node-name", name, "--port", "0", "--root-dir", n.root, "--node-status-update-frequency", "1s",
		"--sync-frequency", "2s", "--register_node=false", "--manifest-url", srv.URL, "--http-check-frequency", "1s"}
	t.Cleanup(n.removeContainers)
	n.agent = startAgent(t, s, n.args...)

	mirror := "fromurl-" + name
	n.waitPod(mirror, 60*time.Second, "the static pod from the URL Running", running)
	p, _ := n.pod(mirror)
	if p.Annotations["kubernetes.io/config.source"] != "http" || p.Annotations["kubernetes.io/config.mirror"] == "" {
		t.Errorf("mirror pod annotations %v", p.Annotations)
	}
	n.create(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: bound
spec:
  nodeName: %s
  terminationGracePeriodSeconds: 0
  containers:
  - name: web
    image: kubeactor/testserver:latest
    imagePullPolicy: IfNotPresent
`, name))
	n.waitPod("bound", 60*time.Second, "a pod bound to the unregistered node Running", running)
	if _, err := cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{}); !isNotFound(err) {
		t.Fatalf("the node exists: %v", err)
	}

	n.create(fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n", name))
	Eventually(t, 30*time.Second, "the agent posts the status of the node made by hand", func() error {
		node, err := cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && node.Status.Capacity.Pods().Value() == 110 {
				return nil
			}
		}
		return fmt.Errorf("status %+v", node.Status)
	})
}
