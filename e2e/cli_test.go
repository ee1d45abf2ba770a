package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Kubeactor runs the kubeactor client against the server, with the same kubeconfig
// and home directory as Kubectl.
func (s *Server) Kubeactor(t testing.TB, stdin string, args ...string) Result {
	t.Helper()
	return s.runClient(Binary(t), stdin, append([]string{"--kubeconfig", s.Kubeconfig}, args...))
}

// withoutAge drops the last column (AGE) of every table line, which may tick
// between two runs.
func withoutAge(table string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 {
			f = f[:len(f)-1]
		}
		lines = append(lines, strings.Join(f, " "))
	}
	return strings.Join(lines, "\n")
}

func TestCLIAgreesWithKubectl(t *testing.T) {
	s := StartServer(t, "")
	r := s.Kubeactor(t, "", "create", "-f", guestbook("redis-master-controller.yaml"))
	if r.Err != nil || r.Stdout != "replicationcontroller/redis-master created\n" {
		t.Fatalf("kubeactor create: %v\nstdout %q\nstderr %q", r.Err, r.Stdout, r.Stderr)
	}
	Eventually(t, 30*time.Second, "the rc's pod exists", func() error {
		if out := s.MustKubectl(t, "", "get", "pods", "-o", "name"); !strings.Contains(out, "pod/redis-master-") {
			return fmt.Errorf("pods: %q", out)
		}
		return nil
	})

	tests := []struct {
		name      string
		args      []string
		normalize func(string) string
	}{
		{"names of rcs and pods", []string{"get", "rc,pods", "-o", "name"}, nil},
		{"pod table", []string{"get", "pods"}, withoutAge},
		{"pods as json", []string{"get", "pods", "-o", "json"}, nil},
		{"label selector", []string{"get", "pods", "-l", "name=redis-master"}, withoutAge},
		{"short names and several types", []string{"get", "rc,po"}, withoutAge},
		{"jsonpath", []string{"get", "rc", "redis-master", "-o", "jsonpath={.spec.replicas} {.metadata.labels}"}, nil},
		{"custom columns", []string{"get", "pods", "-o", "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[*].image"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			norm := tt.normalize
			if norm == nil {
				norm = func(s string) string { return s }
			}
			// The pod's status moves on its own; the outputs agree once it settles.
			Eventually(t, 30*time.Second, "kubeactor and kubectl agree", func() error {
				want := s.MustKubectl(t, "", tt.args...)
				got := s.Kubeactor(t, "", tt.args...)
				if got.Err != nil {
					return fmt.Errorf("kubeactor %s: %v: %s", strings.Join(tt.args, " "), got.Err, got.Stderr)
				}
				if norm(got.Stdout) != norm(want) {
					return fmt.Errorf("kubeactor %s printed\n%s\nkubectl printed\n%s", strings.Join(tt.args, " "), got.Stdout, want)
				}
				return nil
			})
		})
	}

	errorCases := [][]string{
		{"get", "pod", "nope"},
		{"create", "-f", guestbook("redis-master-controller.yaml")},
		{"delete", "pod", "nope"},
		{"get", "frobs"},
	}
	for _, args := range errorCases {
		t.Run("error: "+strings.Join(args, " "), func(t *testing.T) {
			want := s.Kubectl("", args...)
			got := s.Kubeactor(t, "", args...)
			if want.Err == nil || got.Err == nil {
				t.Fatalf("want both to fail: kubectl %v, kubeactor %v", want.Err, got.Err)
			}
			if got.Stderr != want.Stderr {
				t.Fatalf("kubeactor printed %q, kubectl printed %q", got.Stderr, want.Stderr)
			}
		})
	}

	t.Run("empty list prints the header", func(t *testing.T) {
		r := s.Kubeactor(t, "", "get", "nodes")
		if r.Err != nil || strings.TrimSpace(r.Stdout) != "NAME   STATUS   ROLES   AGE   VERSION" {
			t.Fatalf("get nodes: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
	})

	t.Run("replace and delete", func(t *testing.T) {
		if r := s.Kubeactor(t, "", "update", "-f", guestbook("redis-master-controller.yaml")); r.Err != nil || r.Stdout != "replicationcontroller/redis-master replaced\n" {
			t.Fatalf("update: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
		if r := s.Kubeactor(t, "", "delete", "pods", "-l", "name=redis-master"); r.Err != nil || !strings.HasPrefix(r.Stdout, "pod \"redis-master-") {
			t.Fatalf("delete -l: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
		if r := s.Kubeactor(t, "", "delete", "rc", "redis-master"); r.Err != nil || r.Stdout != "replicationcontroller \"redis-master\" deleted\n" {
			t.Fatalf("delete: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
	})
}

// kubeactorOK runs kubeactor and fails unless it succeeds printing want.
func (s *Server) kubeactorOK(t *testing.T, want string, args ...string) {
	t.Helper()
	r := s.Kubeactor(t, "", args...)
	if r.Err != nil || r.Stdout != want {
		t.Fatalf("kubeactor %s: %v\nstdout %q (want %q)\nstderr %q", strings.Join(args, " "), r.Err, r.Stdout, want, r.Stderr)
	}
}

// sameFailure runs args with both clients and wants the same error output.
func (s *Server) sameFailure(t *testing.T, args ...string) {
	t.Helper()
	want := s.Kubectl("", args...)
	got := s.Kubeactor(t, "", args...)
	if want.Err == nil || got.Err == nil {
		t.Fatalf("%s: want both to fail: kubectl %v, kubeactor %v", strings.Join(args, " "), want.Err, got.Err)
	}
	if got.Stderr != want.Stderr {
		t.Fatalf("%s: kubeactor printed %q, kubectl printed %q", strings.Join(args, " "), got.Stderr, want.Stderr)
	}
}

func TestCLIWritesAgreeWithKubectl(t *testing.T) {
	s := StartServer(t, "")
	s.kubeactorOK(t, "replicationcontroller/redis-master created\n", "create", "-f", guestbook("redis-master-controller.yaml"))
	rc := func(path string) string {
		return s.MustKubectl(t, "", "get", "rc", "redis-master", "-o", "jsonpath="+path)
	}
	check := func(t *testing.T, path, want string) {
		t.Helper()
		if got := rc(path); got != want {
			t.Fatalf("kubectl reads %s = %q, want %q", path, got, want)
		}
	}

	t.Run("label", func(t *testing.T) {
		s.kubeactorOK(t, "replicationcontroller/redis-master labeled\n", "label", "rc", "redis-master", "env=prod", "tier=db")
		check(t, "{.metadata.labels.env} {.metadata.labels.tier} {.metadata.labels.name}", "prod db redis-master")
		s.sameFailure(t, "label", "rc", "redis-master", "env=dev")
		s.kubeactorOK(t, "replicationcontroller/redis-master not labeled\n", "label", "rc/redis-master", "env=prod")
		s.kubeactorOK(t, "replicationcontroller/redis-master labeled\n", "label", "rc", "redis-master", "env=dev", "--overwrite", "tier-")
		check(t, "{.metadata.labels}", `{"env":"dev","name":"redis-master"}`)
		s.kubeactorOK(t, "replicationcontroller/redis-master labeled\n", "label", "rc", "-l", "name=redis-master", "env-")
		check(t, "{.metadata.labels}", `{"name":"redis-master"}`)
	})

	t.Run("annotate", func(t *testing.T) {
		s.kubeactorOK(t, "replicationcontroller/redis-master annotated\n", "annotate", "rc", "redis-master", "owner=team a")
		check(t, "{.metadata.annotations.owner}", "team a")
		s.sameFailure(t, "annotate", "rc", "redis-master", "owner=b")
		s.kubeactorOK(t, "replicationcontroller/redis-master annotated\n", "annotate", "--all", "rc", "owner-")
		check(t, "{.metadata.annotations.owner}", "")
	})

	t.Run("scale", func(t *testing.T) {
		s.kubeactorOK(t, "replicationcontroller/redis-master scaled\n", "scale", "rc", "redis-master", "--replicas=2")
		check(t, "{.spec.replicas}", "2")
		s.sameFailure(t, "scale", "rc", "redis-master", "--replicas=3", "--current-replicas=5")
		s.kubeactorOK(t, "replicationcontroller/redis-master scaled\n", "scale", "rc/redis-master", "--replicas=3", "--current-replicas=2")
		check(t, "{.spec.replicas}", "3")
	})

	t.Run("patch", func(t *testing.T) {
		s.kubeactorOK(t, "replicationcontroller/redis-master patched\n", "patch", "rc", "redis-master", "-p", `{"spec":{"replicas":1}}`)
		check(t, "{.spec.replicas}", "1")
		s.kubeactorOK(t, "replicationcontroller/redis-master patched\n", "patch", "rc", "redis-master", "--type", "merge", "-p", "metadata:\n  labels:\n    app: redis")
		check(t, "{.metadata.labels.app}", "redis")
		s.kubeactorOK(t, "replicationcontroller/redis-master patched\n", "patch", "rc", "redis-master", "--type=json", "-p", `[{"op":"remove","path":"/metadata/labels/app"}]`)
		check(t, "{.metadata.labels}", `{"name":"redis-master"}`)
		s.sameFailure(t, "patch", "rc", "nope", "-p", `{"spec":{"replicas":1}}`)
	})

	t.Run("api-versions, version, cluster-info", func(t *testing.T) {
		s.kubeactorOK(t, s.MustKubectl(t, "", "api-versions"), "api-versions")
		r := s.Kubeactor(t, "", "version")
		lines := strings.Split(r.Stdout, "\n")
		want := strings.Split(s.MustKubectl(t, "", "version"), "\n")
		if r.Err != nil || !strings.HasPrefix(lines[0], "kubeactor ") || lines[1] != want[len(want)-2] {
			t.Fatalf("version: %v %q %q (kubectl: %q)", r.Err, r.Stdout, r.Stderr, want)
		}
		r = s.Kubeactor(t, "", "cluster-info")
		if r.Err != nil || !strings.HasPrefix(r.Stdout, "Kubernetes master is running at http") {
			t.Fatalf("cluster-info: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
	})

	t.Run("config written by kubeactor is honoured by kubectl", func(t *testing.T) {
		server := s.MustKubectl(t, "", "config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")
		s.kubeactorOK(t, "Cluster \"book\" set.\n", "config", "set-cluster", "book", "--server="+server)
		s.kubeactorOK(t, "User \"dev\" set.\n", "config", "set-credentials", "dev", "--token=secret")
		s.kubeactorOK(t, "Context \"ctx-dev\" created.\n", "config", "set-context", "ctx-dev", "--namespace=development", "--cluster=book", "--user=dev")
		s.kubeactorOK(t, "Switched to context \"ctx-dev\".\n", "config", "use-context", "ctx-dev")
		s.kubeactorOK(t, "ctx-dev\n", "config", "current-context")
		s.kubeactorOK(t, s.MustKubectl(t, "", "config", "view"), "config", "view")
		if got := s.MustKubectl(t, "", "config", "current-context"); got != "ctx-dev\n" {
			t.Fatalf("kubectl current-context %q", got)
		}
		if got := s.MustKubectl(t, "", "config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}"); got != "development" {
			t.Fatalf("kubectl sees namespace %q", got)
		}
		s.kubeactorOK(t, "Using namespace development\n", "namespace")
		s.kubeactorOK(t, "Set current namespace to default\n", "namespace", "default")
		// kubectl now talks to the server through the new context, in its namespace.
		if out := s.MustKubectl(t, "", "get", "rc", "-o", "name"); out != "replicationcontroller/redis-master\n" {
			t.Fatalf("kubectl get rc through ctx-dev: %q", out)
		}
		s.sameFailure(t, "config", "use-context", "nope")
	})
}
