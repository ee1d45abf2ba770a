package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const lbRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: lbweb
spec:
  replicas: 1
  selector: {app: lbweb}
  template:
    metadata:
      labels: {app: lbweb}
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
  name: lbweb
spec:
  type: LoadBalancer
  selector: {app: lbweb}
  ports:
  - port: 8081
    targetPort: 8080
`

// TestServiceLoadBalancer (iptables mode, one host): a LoadBalancer service gets a
// node port and, as ingress, the node's address; the service answers there at its
// port, from outside the node (PREROUTING) and from the node itself (OUTPUT), and
// kubectl shows the address under EXTERNAL-IP.
func TestServiceLoadBalancer(t *testing.T) {
	c := startCluster(t, 1)
	h := c.hosts[0]
	c.s.MustKubectl(t, lbRC, "create", "-f", "-")
	var svc *corev1.Service
	Eventually(t, 30*time.Second, "the service's ingress is the node's address", func() error {
		var err error
		if svc, err = c.cs.CoreV1().Services("default").Get(t.Context(), "lbweb", metav1.GetOptions{}); err != nil {
			return err
		}
		if in := svc.Status.LoadBalancer.Ingress; len(in) != 1 || in[0].IP != h.ip {
			return fmt.Errorf("ingress %+v, want %s", in, h.ip)
		}
		return nil
	})
	if svc.Spec.Ports[0].NodePort == 0 {
		t.Errorf("no node port: %+v", svc.Spec.Ports)
	}
	out := c.s.MustKubectl(t, "", "get", "svc", "lbweb")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get svc:\n%s", out)
	}
	head, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	col := map[string]string{}
	for i, name := range head {
		if i < len(row) {
			col[name] = row[i]
		}
	}
	if col["TYPE"] != "LoadBalancer" || col["EXTERNAL-IP"] != h.ip || col["PORT(S)"] != fmt.Sprintf("8081:%d/TCP", svc.Spec.Ports[0].NodePort) {
		t.Errorf("kubectl get svc: %v, want EXTERNAL-IP %s\n%s", col, h.ip, out)
	}

	url := "http://" + h.ip + ":8081/hostname"
	pods, err := c.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=lbweb"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("lbweb pods: %v %v", pods, err)
	}
	pod := pods.Items[0].Name
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 3 * time.Second}
	Eventually(t, 60*time.Second, "the ingress address answers from outside the node", func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if got := strings.TrimSpace(string(b)); got != pod {
			return fmt.Errorf("answer %q, want %q", got, pod)
		}
		return nil
	})
	Eventually(t, 30*time.Second, "the ingress address answers on the node itself", func() error {
		out, err := exec.Command("ip", "netns", "exec", h.name, "curl", "-sS", "--max-time", "3", url).CombinedOutput()
		if err != nil {
			return fmt.Errorf("curl in %s: %v: %s", h.name, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != pod {
			return fmt.Errorf("answer %q, want %q", got, pod)
		}
		return nil
	})
}
