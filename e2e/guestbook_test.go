package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGuestbook runs the book's guestbook (§1.3) for real on two hosts: the six
// files, with only the image names changed, created with kubectl in the book's
// order. A message written through NodePort 30001 goes to the master and comes back
// read through the slaves, on either node's address, with the service proxy in
// each mode. The pods also resolve the services by name through the cluster DNS
// (UDP through the service proxy).
func TestGuestbook(t *testing.T) {
	for _, mode := range []string{"iptables", "userspace"} {
		t.Run(mode, func(t *testing.T) { runGuestbook(t, mode) })
	}
}

func runGuestbook(t *testing.T, mode string) {
	c := startCluster(t, 2, "--proxy-mode", mode)
	for _, f := range []string{"redis-master-controller.yaml", "redis-master-service.yaml",
		"redis-slave-controller.yaml", "redis-slave-service.yaml",
		"frontend-controller.yaml", "frontend-service.yaml"} {
		c.s.MustKubectl(t, "", "create", "-f", filepath.Join("testdata", "guestbook-local", f))
	}
	Eventually(t, 120*time.Second, "six guestbook pods running", func() error {
		pods, err := c.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		var up int
		for i := range pods.Items {
			if ready(&pods.Items[i]) == nil {
				up++
			}
		}
		if up != 6 {
			return fmt.Errorf("%d of %d pods ready", up, len(pods.Items))
		}
		return nil
	})
	out := c.s.MustKubectl(t, "", "get", "pods", "-o", "wide")
	for _, h := range c.hosts {
		if !strings.Contains(out, h.name) {
			t.Logf("no pod on %s:\n%s", h.name, out)
		}
	}

	message := "Hello World!"
	front := "http://" + c.hosts[0].ip + ":30001/"
	Eventually(t, 60*time.Second, "set through NodePort 30001", func() error {
		body, err := httpGet(front + "?cmd=set&key=messages&value=" + url.QueryEscape(message))
		if err != nil || !strings.Contains(body, `"Updated"`) {
			return fmt.Errorf("%q %v", body, err)
		}
		return nil
	})
	for _, h := range c.hosts {
		Eventually(t, 60*time.Second, "the message read through the slaves on "+h.name, func() error {
			body, err := httpGet("http://" + h.ip + ":30001/?cmd=get&key=messages")
			if err != nil || !strings.Contains(body, `"Hello World!"`) {
				return fmt.Errorf("%q %v", body, err)
			}
			return nil
		})
	}

	// A ClusterFirst pod resolves a service through the cluster DNS.
	pods, err := c.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "name=frontend"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("frontend pods: %v", err)
	}
	svc, err := c.cs.CoreV1().Services("default").Get(t.Context(), "redis-master", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.s.MustKubectl(t, `apiVersion: v1
kind: Pod
metadata:
  name: dnsclient
spec:
  containers:
  - name: shell
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "sleep 3600"]
`, "create", "-f", "-")
	n := &dockerNode{t: t, s: c.s, cs: c.cs}
	n.waitPod("dnsclient", 60*time.Second, "Running", running)
	resolv := c.s.MustKubectl(t, "", "exec", "dnsclient", "--", "cat", "/etc/resolv.conf")
	if !strings.Contains(resolv, "nameserver 10.254.0.10") || !strings.Contains(resolv, "search default.svc.cluster.local svc.cluster.local cluster.local") {
		t.Errorf("resolv.conf of a ClusterFirst pod:\n%s", resolv)
	}
	Eventually(t, 30*time.Second, "nslookup redis-master", func() error {
		r := c.s.Kubectl("", "exec", "dnsclient", "--", "nslookup", "redis-master.default.svc.cluster.local")
		if r.Err != nil || !strings.Contains(r.Stdout, svc.Spec.ClusterIP) {
			return fmt.Errorf("%v %q %q", r.Err, r.Stdout, r.Stderr)
		}
		return nil
	})
}
