package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// capsScript prints the bits of the container's effective capabilities the test
// looks at: CHOWN (0) and NET_ADMIN (12), and SYS_ADMIN (21), which only a
// privileged container has among Docker's defaults; then it stays up for exec.
const capsScript = `c=$(awk '/^CapEff/{print $2}' /proc/self/status); ` +
	`echo "chown=$(( (0x$c >> 0) & 1 )) net_admin=$(( (0x$c >> 12) & 1 )) sys_admin=$(( (0x$c >> 21) & 1 ))"; sleep 3600`

const securityContextPod = `apiVersion: v1
kind: Pod
metadata:
  name: sc
spec:
  containers:
  - name: user
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "id -u; id -g; sleep 3600"]
    securityContext:
      runAsUser: 1234
      runAsGroup: 5678
  - name: caps
    image: kubeactor/busybox:latest
    command: ["sh", "-c", %q]
    securityContext:
      capabilities:
        add: ["NET_ADMIN"]
        drop: ["CHOWN"]
  - name: plain
    image: kubeactor/busybox:latest
    command: ["sh", "-c", %q]
`

const privilegedPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
  - name: main
    image: kubeactor/busybox:latest
    command: ["sh", "-c", %q]
    securityContext:
      privileged: true
`

// TestDockerPodSecurityContext (issue 14): the Docker node agent applies a
// container's whole securityContext (runAsUser and runAsGroup, capabilities added and
// dropped, seen from inside the containers; privileged, seen in the engine); with
// --allow-privileged (the book's --allow_privileged) a privileged pod is admitted and DenyExecOnPrivileged
// refuses kubectl exec and attach into it while exec into the other pod works.
func TestDockerPodSecurityContext(t *testing.T) {
	requireDocker(t)
	s := StartServer(t, "", "--allow_privileged", "--admission_control=NamespaceLifecycle,DenyExecOnPrivileged")
	n := startDockerNodeOn(t, s, "--read-only-port=0", "--healthz-port=0")
	n.create(fmt.Sprintf(securityContextPod, capsScript, capsScript))
	n.create(fmt.Sprintf(privilegedPod, "priv", capsScript))
	n.waitPod("sc", 90*time.Second, "Running", running)

	tests := []struct{ pod, container, want string }{
		{"sc", "user", "1234\n5678\n"},
		{"sc", "caps", "chown=0 net_admin=1 sys_admin=0\n"},
		{"sc", "plain", "chown=1 net_admin=0 sys_admin=0\n"}, // Docker's defaults: the control
	}
	// The privileged container is created privileged. (Whether it then runs depends on
	// the engine's own privileges: an engine in a container without all capabilities,
	// as on the machine these tests were written on, fails it with "unable to apply caps".)
	t.Run("priv/main is privileged in the engine", func(t *testing.T) {
		Eventually(t, 90*time.Second, "a privileged container of pod priv", func() error {
			out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=io.kubeactor.node="+n.name,
				"--filter", "label=io.kubernetes.pod.name=priv", "--filter", "label=io.kubernetes.container.name=main").Output()
			if err != nil || len(strings.Fields(string(out))) == 0 {
				return fmt.Errorf("no container yet: %v", err)
			}
			id := strings.Fields(string(out))[0]
			got, err := exec.Command("docker", "inspect", "--format", "{{.HostConfig.Privileged}}", id).Output()
			if err != nil || strings.TrimSpace(string(got)) != "true" {
				return fmt.Errorf("container %s: Privileged %q %v", id, got, err)
			}
			return nil
		})
	})
	for _, tt := range tests {
		t.Run(tt.pod+"/"+tt.container, func(t *testing.T) {
			Eventually(t, 30*time.Second, "the container's output", func() error {
				if out := s.Kubectl("", "logs", tt.pod, "-c", tt.container).Stdout; out != tt.want {
					return fmt.Errorf("logs %q, want %q", out, tt.want)
				}
				return nil
			})
		})
	}

	t.Run("exec as the container's user", func(t *testing.T) {
		if out := s.MustKubectl(t, "", "exec", "sc", "-c", "user", "--", "id", "-u"); out != "1234\n" {
			t.Fatalf("exec id -u: %q", out)
		}
	})
	const denied = `Pod "priv" is forbidden: cannot exec into or attach to a privileged container`
	for _, args := range [][]string{
		{"exec", "priv", "--", "true"},
		{"attach", "priv", "-c", "main"},
	} {
		t.Run("DenyExecOnPrivileged: kubectl "+args[0], func(t *testing.T) {
			r := s.Kubectl("", args...)
			if r.Err == nil || !strings.Contains(r.Stderr, denied) {
				t.Fatalf("kubectl %v: %v, want %q:\n%s%s", args, r.Err, denied, r.Stdout, r.Stderr)
			}
		})
	}
}

// TestPrivilegedAndSecurityContextDeny (issue 14): without --allow-privileged (v1.0's
// default) a privileged pod is refused with 422; with SecurityContextDeny in the
// chain a pod setting runAsUser or seLinuxOptions is refused with 403, and one
// adding capabilities is admitted, as in v1.0.
func TestPrivilegedAndSecurityContextDeny(t *testing.T) {
	s := StartServer(t, "", "--admission-control", "NamespaceLifecycle,SecurityContextDeny")
	pod := func(name, securityContext string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: main\n    image: kubeactor/busybox:latest\n    securityContext: %s\n", name, securityContext)
	}
	tests := []struct {
		name, securityContext string
		want                  string // "" when admitted
	}{
		{"priv", `{privileged: true}`, `The Pod "priv" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`},
		{"user", `{runAsUser: 1234}`, `Error from server (Forbidden): error when creating "STDIN": pods "user" is forbidden: SecurityContext.RunAsUser is forbidden`},
		{"selinux", `{seLinuxOptions: {level: "s0:c123,c456"}}`, `Error from server (Forbidden): error when creating "STDIN": pods "selinux" is forbidden: SecurityContext.SELinuxOptions is forbidden`},
		{"caps", `{capabilities: {add: [NET_ADMIN]}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Kubectl(pod(tt.name, tt.securityContext), "create", "-f", "-")
			if tt.want == "" {
				if r.Err != nil {
					t.Fatalf("refused: %v\n%s", r.Err, r.Stderr)
				}
				return
			}
			if r.Err == nil || !strings.Contains(r.Stderr, tt.want) {
				t.Fatalf("kubectl create: %v, want %q:\n%s%s", r.Err, tt.want, r.Stdout, r.Stderr)
			}
			if g := s.Kubectl("", "get", "pod", tt.name); g.Err == nil {
				t.Fatalf("the refused pod %s was stored", tt.name)
			}
		})
	}
}
