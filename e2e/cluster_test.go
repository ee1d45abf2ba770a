package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Server flags that shorten the node lifecycle so that failures play out in seconds.
var fastNodeLifecycle = []string{
	"--node-monitor-grace-period=2s", "--node-startup-grace-period=3s", "--node-monitor-period=200ms",
	"--pod-eviction-timeout=2s", "--deleting-pods-qps=100", "--deleting-pods-burst=100",
}

// nodesOf maps each active pod of selector sel to its node ("" when unbound).
func nodesOf(t *testing.T, s *Server, sel string) map[string]string {
	t.Helper()
	list, err := clientset(t, s).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.Spec.NodeName
		}
	}
	return out
}

// TestNodeFailureEvictsPods stops one of two simulated agents: its nodes go
// NotReady, their pods are evicted, and the RC comes back to full strength on the
// remaining nodes, all driven and checked through kubectl.
func TestNodeFailureEvictsPods(t *testing.T) {
	s := StartServer(t, "", fastNodeLifecycle...)
	startAgent(t, s, "--simulate", "2", "--name-prefix", "stay", "--node-status-update-frequency", "500ms")
	doomed := startAgent(t, s, "--simulate", "2", "--name-prefix", "gone", "--node-status-update-frequency", "500ms")
	Eventually(t, 30*time.Second, "4 Ready nodes", func() error {
		out := s.MustKubectl(t, "", "get", "nodes", "--no-headers")
		if n := strings.Count(out, " Ready "); n != 4 {
			return fmt.Errorf("nodes:\n%s", out)
		}
		return nil
	})
	s.MustKubectl(t, strings.Replace(mustRead(t, guestbook("frontend-controller.yaml")), "replicas: 3", "replicas: 8", 1), "create", "-f", "-")
	Eventually(t, 30*time.Second, "8 pods Running on 4 nodes", func() error {
		out := s.MustKubectl(t, "", "get", "pods", "-l", "name=frontend", "--no-headers")
		if n := strings.Count(out, "Running"); n != 8 {
			return fmt.Errorf("pods:\n%s", out)
		}
		return nil
	})
	onGone := 0
	for _, node := range nodesOf(t, s, "name=frontend") {
		if strings.HasPrefix(node, "gone-") {
			onGone++
		}
	}
	if onGone == 0 {
		t.Fatalf("no pod was scheduled on the nodes that will fail: %v", nodesOf(t, s, "name=frontend"))
	}

	doomed.Stop(t)
	Eventually(t, 30*time.Second, "the stopped agent's nodes NotReady", func() error {
		out := s.MustKubectl(t, "", "get", "nodes", "--no-headers")
		if strings.Count(out, "NotReady") != 2 || strings.Count(out, " Ready ") != 2 {
			return fmt.Errorf("nodes:\n%s", out)
		}
		return nil
	})
	Eventually(t, 60*time.Second, "8 pods Running on the remaining nodes", func() error {
		nodes := nodesOf(t, s, "name=frontend")
		running := strings.Count(s.MustKubectl(t, "", "get", "pods", "-l", "name=frontend", "--no-headers"), "Running")
		for _, node := range nodes {
			if !strings.HasPrefix(node, "stay-") {
				return fmt.Errorf("a pod is still on %q: %v", node, nodes)
			}
		}
		if len(nodes) != 8 || running < 8 {
			return fmt.Errorf("%d active pods, %d Running: %v", len(nodes), running, nodes)
		}
		return nil
	})
}

// TestRCActorPanicCreatesNoDuplicate injects panics into an RC's actor through the
// test hook while it scales up: it is restarted, goes on, and no pod is created twice.
func TestRCActorPanicCreatesNoDuplicate(t *testing.T) {
	s := StartServer(t, "", "--enable-test-hooks")
	s.MustKubectl(t, strings.Replace(mustRead(t, guestbook("frontend-controller.yaml")), "replicas: 3", "replicas: 500", 1), "create", "-f", "-")
	for i := 0; i < 5; i++ {
		resp, err := http.Post(s.URL+"/debug/kubeactor/panic?resource=replicationcontrollers&namespace=default&name=frontend", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("panic hook: %s", resp.Status)
		}
	}
	Eventually(t, 60*time.Second, "500 pods", func() error {
		if n := len(nodesOf(t, s, "name=frontend")); n != 500 {
			return fmt.Errorf("%d pods", n)
		}
		return nil
	})
	all, err := clientset(t, s).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "name=frontend"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 500 {
		t.Fatalf("%d pods exist (terminating ones included), want exactly 500: a pod was created twice", len(all.Items))
	}
	if !strings.Contains(s.Logs(), "object actor restarting") {
		t.Fatalf("the RC's actor never restarted:\n%s", s.Logs())
	}
}

// TestServerRestartMidScaleUp kills the server with SIGKILL while an RC scales up to
// 1,000 (at several moments after its creation) and restarts it: afterwards there are
// exactly 1,000 pods, none created twice.
func TestServerRestartMidScaleUp(t *testing.T) {
	rc := &corev1.ReplicationController{}
	decodeYAML(t, strings.Replace(mustRead(t, guestbook("frontend-controller.yaml")), "replicas: 3", "replicas: 1000", 1), rc)
	for _, delay := range []time.Duration{0, 10 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := StartServer(t, dir)
			if _, err := clientset(t, s).CoreV1().ReplicationControllers("default").Create(context.Background(), rc.DeepCopy(), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			<-time.After(delay)
			s.Kill()
			s2 := StartServer(t, dir)
			before := len(nodesOf(t, s2, "name=frontend"))
			Eventually(t, 60*time.Second, "1000 pods after the restart", func() error {
				all, err := clientset(t, s2).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "name=frontend"})
				if err != nil {
					return err
				}
				if len(all.Items) != 1000 {
					return fmt.Errorf("%d pods", len(all.Items))
				}
				return nil
			})
			t.Logf("killed %s after the RC's creation: %d pods right after the restart, 1000 in the end", delay, before)
		})
	}
}

// TestServicesWithSimulatedNodes creates the book's guestbook objects with simulated
// nodes: the services get cluster IPs in the range and the NodePort 30001, and the
// endpoints list the Running pods' IPs with their ports.
func TestServicesWithSimulatedNodes(t *testing.T) {
	s := StartServer(t, "")
	startAgent(t, s, "--simulate", "3", "--node-status-update-frequency", "1s")
	for _, f := range []string{"redis-master-controller.yaml", "redis-master-service.yaml", "redis-slave-controller.yaml",
		"redis-slave-service.yaml", "frontend-controller.yaml", "frontend-service.yaml"} {
		s.MustKubectl(t, "", "create", "-f", guestbook(f))
	}
	rangeNet := netip.MustParsePrefix("10.254.0.0/16")
	cs := clientset(t, s)
	for _, name := range []string{"redis-master", "redis-slave", "frontend"} {
		svc, err := cs.CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil || !rangeNet.Contains(ip) {
			t.Errorf("service %s cluster IP %q is not in %s", name, svc.Spec.ClusterIP, rangeNet)
		}
	}
	if out := s.MustKubectl(t, "", "get", "svc", "frontend"); !strings.Contains(out, "80:30001/TCP") || !strings.Contains(out, "NodePort") {
		t.Errorf("frontend service:\n%s", out)
	}
	want := map[string]int{"redis-master": 1, "redis-slave": 2, "frontend": 3}
	for name, n := range want {
		Eventually(t, 30*time.Second, "endpoints of "+name, func() error {
			ep, err := cs.CoreV1().Endpoints("default").Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var addrs []corev1.EndpointAddress
			for _, ss := range ep.Subsets {
				addrs = append(addrs, ss.Addresses...)
			}
			if len(addrs) != n {
				return fmt.Errorf("%d ready addresses: %+v", len(addrs), ep.Subsets)
			}
			return nil
		})
	}
	if out := s.MustKubectl(t, "", "get", "endpoints", "redis-master"); !strings.Contains(out, ":6379") {
		t.Errorf("endpoints:\n%s", out)
	}
	if out := s.MustKubectl(t, "", "get", "svc", "kubernetes", "-o", "jsonpath={.spec.clusterIP} {.spec.ports[0].port}"); out != "10.254.0.1 443" {
		t.Errorf("kubernetes service: %q", out)
	}
	// A NodePort outside the range is refused with a field error.
	bad := strings.NewReplacer("name: frontend\n  labels", "name: frontend-2\n  labels", "nodePort: 30001", "nodePort: "+strconv.Itoa(40000)).Replace(mustRead(t, guestbook("frontend-service.yaml")))
	if r := s.Kubectl(bad, "create", "-f", "-"); r.Err == nil || !strings.Contains(r.Stderr, "provided port is not in the valid range") {
		t.Errorf("out-of-range nodePort: err=%v stderr=%q", r.Err, r.Stderr)
	}
}

func decodeYAML(t *testing.T, doc string, into any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(doc), into); err != nil {
		t.Fatal(err)
	}
}
