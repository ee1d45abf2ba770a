package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDockerNFSVolume: an nfs volume is mounted on the node with the machine's NFS
// client and bound into the containers: read-write (a file the pod writes lands in
// the export) and readOnly (writes fail). The server is the kernel's (Debian's
// nfs-kernel-server: rpcbind, exportfs, rpc.nfsd, rpc.mountd) on 127.0.0.1. Where
// the kernel or this machine's privileges allow neither serving nor mounting NFS,
// the test is skipped with the errors it met.
func TestDockerNFSVolume(t *testing.T) {
	requireDocker(t)
	export := startNFSServer(t)
	if err := os.WriteFile(filepath.Join(export, "hello"), []byte("from the export\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	n := startDockerNode(t, privatePorts...)
	n.create(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: nfs-user
spec:
  containers:
  - name: main
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "while true; do sleep 1; done"]
    volumeMounts:
    - {name: rw, mountPath: /rw}
    - {name: ro, mountPath: /ro}
  volumes:
  - name: rw
    nfs: {server: 127.0.0.1, path: %q}
  - name: ro
    nfs: {server: 127.0.0.1, path: %q, readOnly: true}
`, export, export))
	n.waitPod("nfs-user", 90*time.Second, "Running", running)

	exec := func(cmd string) Result { return n.s.Kubectl("", "exec", "nfs-user", "--", "sh", "-c", cmd) }
	if r := exec("cat /rw/hello /ro/hello"); r.Err != nil || r.Stdout != "from the export\nfrom the export\n" {
		t.Errorf("read the export: %v %q %q", r.Err, r.Stdout, r.Stderr)
	}
	if r := exec("echo from-the-pod > /rw/written"); r.Err != nil {
		t.Errorf("write to the read-write mount: %v %q", r.Err, r.Stderr)
	}
	if got, err := os.ReadFile(filepath.Join(export, "written")); err != nil || string(got) != "from-the-pod\n" {
		t.Errorf("the export has %q, %v", got, err)
	}
	if r := exec("echo nope > /ro/nope"); r.Err == nil || !strings.Contains(r.Stderr, "Read-only file system") {
		t.Errorf("write to the readOnly mount: %v %q", r.Err, r.Stderr)
	}

	// Deleting the pod unmounts the volume and keeps the export's files.
	n.s.MustKubectl(t, "", "delete", "pod", "nfs-user")
	Eventually(t, 60*time.Second, "the pod's volume directory removed", func() error {
		if _, err := os.Stat(filepath.Join(n.root, "pods")); err == nil {
			entries, _ := os.ReadDir(filepath.Join(n.root, "pods"))
			if len(entries) > 0 {
				return fmt.Errorf("%d pod directories left", len(entries))
			}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(export, "written")); err != nil {
		t.Errorf("the export lost its file when the pod went: %v", err)
	}
}

// TestDockerNFSVolumeFailedMount: an nfs volume the node cannot mount (no such
// export here; on this machine, no NFS client in the kernel either) keeps the pod
// Pending, with a FailedMount event carrying mount's own words.
func TestDockerNFSVolumeFailedMount(t *testing.T) {
	n := startDockerNode(t, privatePorts...)
	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: nfs-missing
spec:
  containers:
  - name: main
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "while true; do sleep 1; done"]
    volumeMounts:
    - {name: data, mountPath: /data}
  volumes:
  - name: data
    nfs: {server: 127.0.0.1, path: /kubeactor-no-such-export}
`)
	Eventually(t, 150*time.Second, "FailedMount event for the nfs volume", func() error {
		if ev := n.events("nfs-missing"); !strings.Contains(ev, "FailedMount") || !strings.Contains(ev, "mount -t nfs 127.0.0.1:/kubeactor-no-such-export") {
			return fmt.Errorf("events: %s", ev)
		}
		return nil
	})
	if p, err := n.pod("nfs-missing"); err != nil || p.Status.Phase != "Pending" {
		t.Errorf("pod: %v %+v", err, p.Status)
	}
	t.Logf("events: %s", n.events("nfs-missing"))
}

// startNFSServer exports a fresh directory to 127.0.0.1 with the kernel's NFS
// server and checks that this machine's NFS client mounts it; it skips the test
// with the errors met when either cannot work here.
func startNFSServer(t *testing.T) string {
	t.Helper()
	run := func(timeout time.Duration, name string, args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	// What this machine lacks, all of it at once: the kernel's NFS client and
	// server (a kernel without them cannot run the test whatever is installed),
	// then the tools.
	var reasons []string
	var missing []string
	for _, tool := range []string{"mount.nfs", "rpcbind", "exportfs", "rpc.nfsd", "rpc.mountd"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	// The client: an NFSv4 mount fails at once when the kernel has no NFS client
	// ("No such device"), whatever the server; with no mount.nfs, mount cannot try.
	probe := t.TempDir()
	if _, err := exec.LookPath("mount.nfs"); err == nil {
		clientErr := run(20*time.Second, "mount", "-t", "nfs4", "-o", "ro,soft,timeo=10,retrans=1", "127.0.0.1:/", probe)
		if clientErr == nil {
			_ = run(20*time.Second, "umount", "-l", probe)
		} else if strings.Contains(clientErr.Error(), "No such device") || strings.Contains(clientErr.Error(), "unknown filesystem type") {
			reasons = append(reasons, "the kernel's NFS client: "+clientErr.Error())
		} // else the client is there, no server answered yet
	}
	if !isMountPoint("/proc/fs/nfsd") {
		if serverErr := run(10*time.Second, "mount", "-t", "nfsd", "nfsd", "/proc/fs/nfsd"); serverErr == nil {
			t.Cleanup(func() { _ = run(10*time.Second, "umount", "/proc/fs/nfsd") })
		} else {
			reasons = append(reasons, "the kernel's NFS server: "+serverErr.Error())
		}
	}
	if len(missing) > 0 {
		reasons = append(reasons, strings.Join(missing, ", ")+" not installed (Debian's nfs-common and nfs-kernel-server)")
	}
	if len(reasons) > 0 {
		t.Skipf("NFS cannot be served or mounted here: %s", strings.Join(reasons, "; "))
	}

	export := t.TempDir()
	if err := os.Chmod(export, 0o777); err != nil {
		t.Fatal(err)
	}
	steps := [][]string{
		{"rpcbind", "-w"},
		{"exportfs", "-o", "rw,sync,no_root_squash,no_subtree_check,insecure", "127.0.0.1:" + export},
		{"rpc.nfsd", "4"},
		{"rpc.mountd"},
	}
	for _, s := range steps {
		if err := run(30*time.Second, s[0], s[1:]...); err != nil && !(s[0] == "rpcbind" && isRunning("rpcbind")) {
			t.Skipf("the kernel's NFS server does not start here: %v", err)
		}
	}
	t.Cleanup(func() {
		_ = run(30*time.Second, "exportfs", "-u", "127.0.0.1:"+export)
	})
	// The client against the export: the real check.
	if err := run(time.Minute, "mount", "-t", "nfs", "127.0.0.1:"+export, probe); err != nil {
		t.Skipf("this machine's NFS client does not mount the export: %v", err)
	}
	if err := run(20*time.Second, "umount", probe); err != nil {
		t.Fatal(err)
	}
	return export
}

// isMountPoint tells whether path is a mount point.
func isMountPoint(path string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}

// isRunning tells whether a process of that name runs.
func isRunning(name string) bool {
	return exec.Command("pidof", name).Run() == nil
}
