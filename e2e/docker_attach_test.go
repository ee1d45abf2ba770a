package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// privatePorts turn off the agent's fixed read-only and healthz ports, which other
// agents on a shared machine may hold.
var privatePorts = []string{"--read-only-port", "0", "--healthz-port", "0"}

const attachPod = `apiVersion: v1
kind: Pod
metadata:
  name: attachee
spec:
  restartPolicy: Never
  containers:
  - name: talker
    image: kubeactor/busybox:latest
    stdin: true
    stdinOnce: true
    command: ["sh", "-c", "while read l; do echo \"echo:$l\"; echo \"err:$l\" >&2; done; echo bye"]
  - name: ticker
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done"]
`

// TestDockerAttach drives kubectl attach through the API server to the agent,
// which attaches to the container's own stdio through the Docker engine: the
// output of a running container, and stdin to a container created with stdin
// (stdinOnce: closing the input ends its stdin, so the container finishes).
func TestDockerAttach(t *testing.T) {
	n := startDockerNode(t, privatePorts...)
	n.create(attachPod)
	n.waitPod("attachee", 60*time.Second, "Running", running)

	t.Run("output", func(t *testing.T) {
		b := n.s.StartKubectl(t, "attach", "attachee", "-c", "ticker")
		Eventually(t, 20*time.Second, "attached output", func() error {
			if c := strings.Count(b.Output(), "tick"); c < 2 {
				return fmt.Errorf("%d lines so far: %q", c, b.Output())
			}
			return nil
		})
	})

	t.Run("stdin", func(t *testing.T) {
		r := n.s.Kubectl("hello\nworld\n", "attach", "-i", "attachee", "-c", "talker")
		if r.Err != nil || r.Stdout != "echo:hello\necho:world\nbye\n" || !strings.Contains(r.Stderr, "err:hello\nerr:world\n") {
			t.Fatalf("attach -i: %v stdout %q stderr %q", r.Err, r.Stdout, r.Stderr)
		}
		// stdinOnce: the container's stdin closed with the session, so it finished.
		n.waitPod("attachee", 30*time.Second, "talker terminated with 0", func(p *corev1.Pod) error {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == "talker" {
					if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
						return fmt.Errorf("talker state %+v", cs.State)
					}
					return nil
				}
			}
			return fmt.Errorf("no status for talker")
		})
	})

	t.Run("refused", func(t *testing.T) {
		// A container that has finished cannot be attached to.
		r := n.s.Kubectl("", "attach", "attachee", "-c", "talker")
		if r.Err == nil {
			t.Fatalf("attach to a finished container: %q %q", r.Stdout, r.Stderr)
		}
		// Nor a container the pod does not have.
		r = n.s.Kubectl("", "attach", "attachee", "-c", "nope")
		if r.Err == nil || !strings.Contains(r.Stderr, "nope") {
			t.Fatalf("attach to an unknown container: %v %q %q", r.Err, r.Stdout, r.Stderr)
		}
	})
}

// TestDockerCopy drives kubectl cp both ways: it runs tar in the container through
// exec (stdin to tar x for local to pod, tar c's output for pod to local).
func TestDockerCopy(t *testing.T) {
	n := startDockerNode(t, privatePorts...)
	n.create(twoContainerPod)
	n.waitPod("duo", 60*time.Second, "Running", running)

	// Local to pod: a directory with a nested file and a binary one, and a single file.
	src := t.TempDir()
	binary := make([]byte, 256<<10)
	for i := range binary {
		binary[i] = byte(i * 7 % 251)
	}
	files := map[string][]byte{
		"a.txt":         []byte("alpha\n"),
		"sub/b.txt":     []byte("beta\n"),
		"sub/blob.bin":  binary,
		"with space.md": []byte("spaced\n"),
	}
	for name, data := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n.s.MustKubectl(t, "", "cp", src, "default/duo:/tmp/in", "-c", "shell")
	for name, data := range files {
		r := n.s.Kubectl("", "exec", "duo", "-c", "shell", "--", "cat", "/tmp/in/"+name)
		if r.Err != nil || r.Stdout != string(data) {
			t.Errorf("in the pod, %s: %v (%d bytes, want %d) %q", name, r.Err, len(r.Stdout), len(data), r.Stderr)
		}
	}
	single := filepath.Join(src, "a.txt")
	n.s.MustKubectl(t, "", "cp", single, "duo:/tmp/single.txt", "-c", "shell")
	if r := n.s.Kubectl("", "exec", "duo", "-c", "shell", "--", "cat", "/tmp/single.txt"); r.Err != nil || r.Stdout != "alpha\n" {
		t.Errorf("single file in the pod: %v %q %q", r.Err, r.Stdout, r.Stderr)
	}

	// Pod to local: what the container wrote, a directory and a single file.
	n.s.MustKubectl(t, "", "exec", "duo", "-c", "shell", "--", "sh", "-c",
		"mkdir -p /tmp/out/deep && echo made-in-pod >/tmp/out/deep/x.txt && cp /tmp/in/sub/blob.bin /tmp/out/blob.bin")
	dst := filepath.Join(t.TempDir(), "out")
	n.s.MustKubectl(t, "", "cp", "duo:/tmp/out", dst, "-c", "shell")
	if got, err := os.ReadFile(filepath.Join(dst, "deep", "x.txt")); err != nil || string(got) != "made-in-pod\n" {
		t.Errorf("copied out deep/x.txt: %v %q", err, got)
	}
	if got, err := os.ReadFile(filepath.Join(dst, "blob.bin")); err != nil || !bytes.Equal(got, binary) {
		t.Errorf("copied out blob.bin: %v (%d bytes, want %d, equal %v)", err, len(got), len(binary), bytes.Equal(got, binary))
	}
	one := filepath.Join(t.TempDir(), "passwd")
	n.s.MustKubectl(t, "", "cp", "duo:/etc/passwd", one, "-c", "shell")
	want := n.s.MustKubectl(t, "", "exec", "duo", "-c", "shell", "--", "cat", "/etc/passwd")
	if got, err := os.ReadFile(one); err != nil || string(got) != want || want == "" {
		t.Errorf("copied out /etc/passwd: %v %q, want %q", err, got, want)
	}

	// A path that does not exist in the pod: nothing is written (kubectl's exit
	// code and tar's complaint are not asserted: kubectl ends once the archive does,
	// racing the exec's status and stderr, as against any kubelet).
	absent := filepath.Join(t.TempDir(), "x")
	r := n.s.Kubectl("", "cp", "duo:/tmp/absent", absent, "-c", "shell")
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Errorf("cp of a missing path made %s: %v (%v %q %q)", absent, err, r.Err, r.Stdout, r.Stderr)
	}
}
