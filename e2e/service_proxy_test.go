package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const webRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: web
spec:
  replicas: 2
  selector: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: kubeactor/testserver:latest
        ports:
        - containerPort: 8080
        readinessProbe:
          httpGet: {path: /ready, port: 8080}
          periodSeconds: 1
          failureThreshold: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: NodePort
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
    nodePort: 30080
`

// TestServiceProxyReliability (iptables mode, two hosts): an established
// connection through a NodePort survives a crash and restart of the node's agent;
// new connections spread over the endpoints, or stay on one with ClientIP affinity;
// an endpoint that fails readiness, and one whose pod is deleted, stops getting new
// connections.
func TestServiceProxyReliability(t *testing.T) {
	c := startCluster(t, 2)
	c.s.MustKubectl(t, webRC, "create", "-f", "-")
	Eventually(t, 90*time.Second, "two web endpoints ready", func() error {
		ep, err := c.cs.CoreV1().Endpoints("default").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 2 {
			return fmt.Errorf("endpoints %+v", ep.Subsets)
		}
		return nil
	})
	url := "http://" + c.hosts[0].ip + ":30080/hostname"

	// One keep-alive connection, used before, during and after the agent's restart.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Second}
	get := func() (string, bool, error) {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			return "", reused, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return strings.TrimSpace(string(b)), reused, err
	}
	var first string
	Eventually(t, 30*time.Second, "NodePort answers", func() error {
		var err error
		first, _, err = get()
		return err
	})
	c.restartAgent(c.hosts[0])
	for i := 0; i < 3; i++ {
		got, reused, err := get()
		if err != nil || !reused || got != first {
			t.Fatalf("after the agent restart: %q reused=%v %v (before: %q)", got, reused, err, first)
		}
	}
	client.CloseIdleConnections()

	// New connections spread over both pods; an unready pod stops getting them.
	pods, err := c.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("web pods: %v", err)
	}
	a, b := pods.Items[0].Name, pods.Items[1].Name
	// Each request on a new connection: the proxy chooses per connection.
	once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 3 * time.Second}
	fresh := func() map[string]int {
		seen := map[string]int{}
		for i := 0; i < 20; i++ {
			resp, err := once.Get(url)
			if err != nil {
				seen["error: "+err.Error()]++
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			seen[strings.TrimSpace(string(b))]++
		}
		return seen
	}
	Eventually(t, 30*time.Second, "both pods answer", func() error {
		if s := fresh(); s[a] == 0 || s[b] == 0 {
			return fmt.Errorf("answers %v", s)
		}
		return nil
	})
	// sessionAffinity ClientIP keeps this client on one pod.
	c.s.MustKubectl(t, "", "patch", "service", "web", "-p", `{"spec":{"sessionAffinity":"ClientIP"}}`)
	Eventually(t, 30*time.Second, "one pod for this client", func() error {
		if s := fresh(); s[a] != 20 && s[b] != 20 {
			return fmt.Errorf("answers %v", s)
		}
		return nil
	})
	c.s.MustKubectl(t, "", "patch", "service", "web", "-p", `{"spec":{"sessionAffinity":"None"}}`)
	Eventually(t, 30*time.Second, "both pods answer again", func() error {
		if s := fresh(); s[a] == 0 || s[b] == 0 {
			return fmt.Errorf("answers %v", s)
		}
		return nil
	})

	c.s.MustKubectl(t, "", "exec", a, "--", "/testserver", "-probe", "http://127.0.0.1:8080/unready")
	Eventually(t, 30*time.Second, "the unready pod gets no new connection", func() error {
		if s := fresh(); s[a] != 0 || s[b] != 20 {
			return fmt.Errorf("answers %v", s)
		}
		return nil
	})
	c.s.MustKubectl(t, "", "exec", a, "--", "/testserver", "-probe", "http://127.0.0.1:8080/make-ready")
	Eventually(t, 30*time.Second, "ready again", func() error {
		if s := fresh(); s[a] == 0 {
			return fmt.Errorf("answers %v", s)
		}
		return nil
	})
	c.s.MustKubectl(t, "", "delete", "pod", b, "--wait=false")
	Eventually(t, 30*time.Second, "the deleted pod gets no new connection", func() error {
		if s := fresh(); s[b] != 0 || s[a] == 0 {
			return fmt.Errorf("answers %v", s)
		}
		return nil
	})
}

// BenchmarkEndpointRemoval measures, on two hosts in iptables mode, how long an
// endpoint keeps getting new connections through a NodePort: from the moment its pod
// starts failing readiness (probe period 1 s, threshold 1), and from the moment its
// pod is deleted, until the first of 10 consecutive new connections that all go to
// the other pod.
func BenchmarkEndpointRemoval(b *testing.B) {
	c := startCluster(b, 2)
	c.s.MustKubectl(b, webRC, "create", "-f", "-")
	url := "http://" + c.hosts[0].ip + ":30080/hostname"
	once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 3 * time.Second}
	answer := func() string {
		resp, err := once.Get(url)
		if err != nil {
			return "error"
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.TrimSpace(string(body))
	}
	// gone waits until 10 consecutive answers avoid pod and returns when the streak began.
	gone := func(pod string) time.Time {
		var streakStart time.Time
		streak := 0
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			at := time.Now()
			if got := answer(); got != pod && got != "error" {
				if streak == 0 {
					streakStart = at
				}
				if streak++; streak == 10 {
					return streakStart
				}
				continue
			}
			streak = 0
		}
		b.Fatalf("pod %s still answers after 60s", pod)
		return time.Time{}
	}
	for i := 0; i < b.N; i++ {
		var a, d string
		Eventually(b, 120*time.Second, "two web endpoints ready", func() error {
			ep, err := c.cs.CoreV1().Endpoints("default").Get(context.Background(), "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 2 || len(ep.Subsets[0].NotReadyAddresses) != 0 {
				return fmt.Errorf("endpoints %+v", ep.Subsets)
			}
			a, d = ep.Subsets[0].Addresses[0].TargetRef.Name, ep.Subsets[0].Addresses[1].TargetRef.Name
			return nil
		})
		start := time.Now()
		c.s.MustKubectl(b, "", "exec", a, "--", "/testserver", "-probe", "http://127.0.0.1:8080/unready")
		unready := gone(a).Sub(start)
		c.s.MustKubectl(b, "", "exec", a, "--", "/testserver", "-probe", "http://127.0.0.1:8080/make-ready")
		Eventually(b, 30*time.Second, a+" ready again", func() error {
			for range 20 {
				if answer() == a {
					return nil
				}
			}
			return fmt.Errorf("%s gets no connection", a)
		})
		start = time.Now()
		c.s.MustKubectl(b, "", "delete", "pod", d, "--wait=false")
		deleted := gone(d).Sub(start)
		b.ReportMetric(ms(unready), "unready-ms")
		b.ReportMetric(ms(deleted), "deleted-ms")
	}
}
