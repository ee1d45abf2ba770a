package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// podNames lists the pods kubectl shows with label selector sel.
func podNames(t *testing.T, s *Server, sel string) []string {
	t.Helper()
	out := s.MustKubectl(t, "", "get", "pods", "-l", sel, "-o", "jsonpath={range .items[*]}{.metadata.name}{\" \"}{.metadata.deletionTimestamp}{\"\\n\"}{end}")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 1 { // not terminating
			names = append(names, f[0])
		}
	}
	return names
}

func waitPods(t *testing.T, s *Server, sel string, want int) []string {
	t.Helper()
	var names []string
	Eventually(t, 30*time.Second, fmt.Sprintf("%d pods with %s", want, sel), func() error {
		names = podNames(t, s, sel)
		if len(names) != want {
			return fmt.Errorf("pods %v", names)
		}
		return nil
	})
	return names
}

// TestReplicationControllerWithKubectl drives an RC with the real kubectl: it creates
// its pods, scales, deletes them with the RC, and leaves them with --cascade=orphan.
func TestReplicationControllerWithKubectl(t *testing.T) {
	s := StartServer(t, "")
	if out := s.MustKubectl(t, "", "create", "-f", guestbook("redis-slave-controller.yaml")); !strings.Contains(out, "replicationcontroller/redis-slave created") {
		t.Fatalf("create: %q", out)
	}
	names := waitPods(t, s, "name=redis-slave", 2)
	for _, n := range names {
		if !regexp.MustCompile(`^redis-slave-[a-z0-9]{5}$`).MatchString(n) {
			t.Errorf("pod name %q is not redis-slave-<5 chars>", n)
		}
	}
	Eventually(t, 30*time.Second, "rc status", func() error {
		if got := s.MustKubectl(t, "", "get", "rc", "redis-slave", "-o", "jsonpath={.status.replicas}/{.status.observedGeneration}"); got != "2/1" {
			return fmt.Errorf("status.replicas/observedGeneration = %s", got)
		}
		return nil
	})

	s.MustKubectl(t, "", "scale", "rc", "redis-slave", "--replicas=4")
	waitPods(t, s, "name=redis-slave", 4)
	s.MustKubectl(t, "", "scale", "rc", "redis-slave", "--replicas=1")
	waitPods(t, s, "name=redis-slave", 1)

	// deleting a pod: the RC replaces it.
	victim := podNames(t, s, "name=redis-slave")[0]
	s.MustKubectl(t, "", "delete", "pod", victim)
	Eventually(t, 30*time.Second, "replacement", func() error {
		now := podNames(t, s, "name=redis-slave")
		if len(now) != 1 || now[0] == victim {
			return fmt.Errorf("pods %v", now)
		}
		return nil
	})

	// delete rc: its pods go with it (kubectl's default cascade is background).
	if out := s.MustKubectl(t, "", "delete", "rc", "redis-slave"); !strings.Contains(out, `replicationcontroller "redis-slave" deleted`) {
		t.Fatalf("delete rc: %q", out)
	}
	waitPods(t, s, "name=redis-slave", 0)

	// --cascade=orphan: the book's "deleting an RC leaves its pods".
	s.MustKubectl(t, "", "create", "-f", guestbook("frontend-controller.yaml"))
	kept := waitPods(t, s, "name=frontend", 3)
	s.MustKubectl(t, "", "delete", "rc", "frontend", "--cascade=orphan")
	Eventually(t, 30*time.Second, "rc gone", func() error {
		if r := s.Kubectl("", "get", "rc", "frontend"); r.Err == nil {
			return fmt.Errorf("rc still there")
		}
		return nil
	})
	if got := podNames(t, s, "name=frontend"); strings.Join(got, ",") != strings.Join(kept, ",") {
		t.Fatalf("orphaned pods %v, want %v", got, kept)
	}
	if owners := s.MustKubectl(t, "", "get", "pods", "-l", "name=frontend", "-o", "jsonpath={.items[*].metadata.ownerReferences}"); owners != "" {
		t.Fatalf("orphaned pods keep owner references: %s", owners)
	}
}

// TestNamespaceDeletion deletes a namespace with contents through kubectl: it turns
// Terminating, refuses new objects (Forbidden), deletes what it holds, and is removed
// once the last object (held by a finalizer here) is gone. default cannot be deleted.
func TestNamespaceDeletion(t *testing.T) {
	s := StartServer(t, "")
	s.MustKubectl(t, "", "create", "namespace", "team-a")
	s.MustKubectl(t, strings.Replace(nginxPod, "name: web", "name: plain", 1), "create", "-n", "team-a", "-f", "-")
	held := strings.Replace(nginxPod, "  name: web\n", "  name: held\n  finalizers:\n  - example.com/hold\n", 1)
	s.MustKubectl(t, held, "create", "-n", "team-a", "-f", "-")

	s.MustKubectl(t, "", "delete", "namespace", "team-a", "--wait=false")
	Eventually(t, 30*time.Second, "namespace Terminating, plain pod gone", func() error {
		phase := s.MustKubectl(t, "", "get", "namespace", "team-a", "-o", "jsonpath={.status.phase}")
		pods := s.MustKubectl(t, "", "get", "pods", "-n", "team-a", "-o", "jsonpath={.items[*].metadata.name}")
		if phase != "Terminating" || pods != "held" {
			return fmt.Errorf("phase %q, pods %q", phase, pods)
		}
		return nil
	})
	r := s.Kubectl(strings.Replace(nginxPod, "name: web", "name: late", 1), "create", "-n", "team-a", "-f", "-")
	if r.Err == nil || !strings.Contains(r.Stderr, "Forbidden") || !strings.Contains(r.Stderr, "because it is being terminated") {
		t.Fatalf("create in a terminating namespace: err=%v stderr=%q", r.Err, r.Stderr)
	}
	s.MustKubectl(t, "", "patch", "pod", "held", "-n", "team-a", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	Eventually(t, 30*time.Second, "namespace removed", func() error {
		if r := s.Kubectl("", "get", "namespace", "team-a"); r.Err == nil {
			return fmt.Errorf("still there: %s", r.Stdout)
		}
		return nil
	})
	if r := s.Kubectl("", "delete", "namespace", "default"); r.Err == nil || !strings.Contains(r.Stderr, "Forbidden") {
		t.Fatalf("deleting default: err=%v stderr=%q", r.Err, r.Stderr)
	}
}
