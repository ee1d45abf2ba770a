package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Kubeactor runs the kubeactor client against the server, with the same kubeconfig
// and home directory as Kubectl.
func (s *Server) Kubeactor(t testing.TB, stdin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), append(args, "--kubeconfig", s.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(s.Kubeconfig))
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return Result{Stdout: out.String(), Stderr: errb.String(), Err: err}
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
