package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

const kubeProxyRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: kpweb
spec:
  replicas: 1
  selector: {app: kpweb}
  template:
    metadata:
      labels: {app: kpweb}
    spec:
      containers:
      - name: web
        image: kubeactor/testserver:latest
        ports:
        - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: kpweb
spec:
  selector: {app: kpweb}
  ports:
  - port: 80
    targetPort: 8080
`

// TestServiceKubeProxy runs the book's node as two processes: the agent with its own
// proxy off (--proxy-mode=none, as the kubelet name runs it), and the binary run as
// kube-proxy through a link with the book's flags, on the same host (a network
// namespace of its own). Only kube-proxy programs the host's tables, and a service's
// cluster IP answers through it: in v1.0's userspace mode (kube-proxy's default),
// then, after a restart with --proxy-mode=iptables, in iptables mode. While it runs
// kube-proxy marks the node as running the service proxy (LoadBalancer services list
// only such nodes' addresses), and takes the mark away when it stops.
func TestServiceKubeProxy(t *testing.T) {
	c := startCluster(t, 1, "--proxy-mode=none")
	h := c.hosts[0]
	link := filepath.Join(t.TempDir(), "kube-proxy")
	if err := exec.Command("ln", "-s", Binary(t), link).Run(); err != nil {
		t.Fatal(err)
	}
	master := "http://" + c.subnet + ".254:" + c.s.URL[strings.LastIndex(c.s.URL, ":")+1:]

	pod, url := startKPWeb(t, c)
	save := func() string {
		out, err := exec.Command("ip", "netns", "exec", h.name, "iptables-save", "-t", "nat").CombinedOutput()
		if err != nil {
			t.Fatalf("iptables-save in %s: %v: %s", h.name, err, out)
		}
		return string(out)
	}
	// The agent alone: no service rules on the host (its proxy is off).
	if nat := save(); strings.Contains(nat, "KUBE-") {
		t.Fatalf("the agent with --proxy-mode=none programmed the host's tables:\n%s", nat)
	}
	proxyMark := func(what, want string) {
		t.Helper()
		Eventually(t, 30*time.Second, what, func() error {
			n, err := c.cs.CoreV1().Nodes().Get(t.Context(), h.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := n.Annotations[kinds.ServiceProxyAnnotation]; got != want {
				return fmt.Errorf("node %s marked %q, want %q", h.name, got, want)
			}
			return nil
		})
	}
	proxyMark("the kubelet alone marks no proxy", "")
	answers := func(what string) {
		t.Helper()
		clusterIPAnswers(t, h.name, url, pod, what, 30*time.Second)
	}
	kubeProxy := func(flags ...string) *Agent {
		args := append([]string{"netns", "exec", h.name, link,
			"--master=" + master, "--kubeconfig=" + c.s.Kubeconfig, "--logtostderr=true", "--v=2",
			"--hostname-override=" + h.name, "--bind-node-ip=" + h.ip}, flags...)
		return startProcess(t, "ip", args...)
	}

	userspace := kubeProxy()
	answers("the cluster IP answers through kube-proxy in userspace mode")
	if nat := save(); !strings.Contains(nat, "KUBE-PORTALS-HOST") || strings.Contains(nat, "KUBE-SVC-") {
		t.Errorf("userspace mode's tables:\n%s", nat)
	}
	proxyMark("kube-proxy marks its node", "userspace")
	userspace.Stop(t)
	proxyMark("a stopped kube-proxy takes its mark away", "")

	kubeProxy("--proxy-mode=iptables")
	answers("the cluster IP answers through kube-proxy in iptables mode")
	proxyMark("kube-proxy in iptables mode marks its node", "iptables")
	if nat := save(); !strings.Contains(nat, "KUBE-SVC-") || strings.Contains(nat, "KUBE-PORTALS-HOST") {
		t.Errorf("iptables mode's tables (userspace's gone):\n%s", nat)
	}
}

// startKPWeb creates the kube-proxy tests' RC and service (kubeProxyRC), waits for its
// one endpoint, and returns its pod's name and the URL of its cluster IP.
func startKPWeb(t *testing.T, c *cluster) (pod, url string) {
	t.Helper()
	c.s.MustKubectl(t, kubeProxyRC, "create", "-f", "-")
	Eventually(t, 60*time.Second, "the service has an endpoint", func() error {
		ep, err := c.cs.CoreV1().Endpoints("default").Get(t.Context(), "kpweb", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 {
			return fmt.Errorf("endpoints %+v", ep.Subsets)
		}
		return nil
	})
	svc, err := c.cs.CoreV1().Services("default").Get(t.Context(), "kpweb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := c.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=kpweb"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("kpweb pods: %v %v", pods, err)
	}
	pod = pods.Items[0].Name
	url = "http://" + svc.Spec.ClusterIP + ":80/hostname"
	return pod, url
}

// clusterIPAnswers waits until url, fetched in the host's network namespace,
// answers with the pod's name.
func clusterIPAnswers(t *testing.T, host, url, pod, what string, within time.Duration) {
	t.Helper()
	Eventually(t, within, what, func() error {
		out, err := exec.Command("ip", "netns", "exec", host, "curl", "-sS", "--max-time", "3", url).CombinedOutput()
		if err != nil {
			return fmt.Errorf("curl %s in %s: %v: %s", url, host, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != pod {
			return fmt.Errorf("answer %q, want %q", got, pod)
		}
		return nil
	})
}
