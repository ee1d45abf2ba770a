package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// bookComponents are the names `make install` links to the binary.
var bookComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl"}

// bookLinks makes a directory of symlinks to the binary under test, one per
// component, as `make install` does.
func bookLinks(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range bookComponents {
		if err := os.Symlink(Binary(t), filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// daemon is a component running in the background, stopped at cleanup.
type daemon struct {
	*Background
	done chan struct{}
	cmd  *exec.Cmd
}

// kill9 kills the component with SIGKILL and waits for it to end.
func (d *daemon) kill9(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done
}

func startDaemon(t *testing.T, program string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(program, args...)
	d := &daemon{Background: &Background{}, done: make(chan struct{}), cmd: cmd}
	var out io.Writer = d.Background
	file := runLogFile(t, filepath.Base(program))
	if file != nil {
		out = io.MultiWriter(d.Background, file)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", program, err)
	}
	go func() {
		_ = cmd.Wait()
		if file != nil {
			_ = file.Close()
		}
		close(d.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			t.Logf("%s %s:\n%s", filepath.Base(program), strings.Join(args, " "), d.Output())
		}
	})
	return d
}

// waitReady waits for the API server at url to answer /readyz.
func waitReady(t *testing.T, url string, d *daemon) {
	t.Helper()
	Eventually(t, 60*time.Second, "kube-apiserver ready", func() error {
		select {
		case <-d.done:
			t.Fatalf("kube-apiserver exited:\n%s", d.Output())
		default:
		}
		return readyz(url)
	})
}

// runComponent runs a component that exits by itself and returns its output.
func runComponent(t *testing.T, program string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, program, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(program), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// bookRedisMaster creates the book's first RC through the kubectl link, waits for its
// pod to run on the node, and reads `kubectl describe pod` as the book's
// troubleshooting flow does (ch3-5 §4.7): the scheduler's Scheduled event, from
// default-scheduler, names the pod and its node.
func bookRedisMaster(t *testing.T, links, url, file string) {
	t.Helper()
	kubectl := filepath.Join(links, "kubectl")
	home := t.TempDir()
	kc := func(args ...string) (string, error) {
		cmd := exec.Command(kubectl, append([]string{"-s", url}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := kc("create", "-f", file, "--validate=true"); err != nil || !strings.Contains(out, "redis-master") {
		t.Fatalf("kubectl create: %v\n%s", err, out)
	}
	// Table 2.2's global flags as the book's §5.4.2 passes them (--api-version="v1").
	if out, err := kc("get", "nodes", "--api-version=v1", "--match-server-version=false", "--insecure-skip-tls-verify=true"); err != nil ||
		!strings.Contains(out, "flag=--api-version") || !strings.Contains(out, "STATUS") {
		t.Fatalf("kubectl get nodes with the book's global flags: %v\n%s", err, out)
	}
	var pod corev1.Pod
	Eventually(t, 60*time.Second, "the redis-master pod runs", func() error {
		out, err := kc("get", "pods", "-l", "name=redis-master", "-o", "json")
		var list corev1.PodList
		if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list.Items) != 1 || list.Items[0].Status.Phase != corev1.PodRunning {
			return fmt.Errorf("%v: %s", err, out)
		}
		pod = list.Items[0]
		return nil
	})
	want := []string{"{default-scheduler ", "Scheduled", "Successfully assigned " + pod.Name + " to " + pod.Spec.NodeName}
	Eventually(t, 30*time.Second, "describe pod shows the Scheduled event", func() error {
		out, err := kc("describe", "pod", pod.Name)
		for _, w := range want {
			if err != nil || !strings.Contains(out, w) {
				return fmt.Errorf("no %q in describe pod (%v):\n%s", w, err, out)
			}
		}
		return nil
	})
}

// startBookAPIServer runs the book's kube-apiserver line through the link, on a free
// loopback port (and HTTPS on another) with a data directory of the test's, and
// returns its URL.
func startBookAPIServer(t *testing.T, links string) (string, *daemon) {
	t.Helper()
	return startBookAPIServerOn(t, links, freePort(t), t.TempDir())
}

// startBookAPIServerOn is startBookAPIServer on port with the data directory data
// (the same two again: a restart) and more flags.
func startBookAPIServerOn(t *testing.T, links string, port int, data string, more ...string) (string, *daemon) {
	t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	api := startDaemon(t, filepath.Join(links, "kube-apiserver"), append([]string{
		"--logtostderr=true", "--v=0", "--etcd_servers=http://127.0.0.1:4001", "--address=127.0.0.1", "--port=" + strconv.Itoa(port),
		"--kubelet_port=10250", "--allow_privileged=false", "--service-cluster-ip-range=10.254.0.0/16",
		"--data-dir=" + data, "--dns-port=0", "--secure-port=0", "--bind-address=127.0.0.1"}, more...)...)
	waitReady(t, url, api)
	return url, api
}

// TestBookDockerKubelet runs the book's kubelet line as the Docker node agent, with
// the project's pause image (`make images`), and the book's first RC on it.
func TestBookDockerKubelet(t *testing.T) {
	requireDocker(t)
	links := bookLinks(t)
	url, _ := startBookAPIServer(t, links)
	node := "e2e-" + randHex(4)
	n := &dockerNode{t: t, name: node}
	t.Cleanup(n.removeContainers)
	startDaemon(t, filepath.Join(links, "kubelet"), "--logtostderr=true", "--v=0", "--api_servers="+url,
		"--address=127.0.0.1", "--port=0", "--hostname_override="+node, "--allow_privileged=false",
		"--pod_infra_container_image="+imagePause, "--root-dir="+t.TempDir(), "--read-only-port=0", "--healthz-port=0",
		"--node-status-update-frequency=1s", "--sync-frequency=2s")
	bookRedisMaster(t, links, url, filepath.Join("testdata", "guestbook-local", "redis-master-controller.yaml"))
}

// TestBookComponentLines runs the book's component command lines through the links,
// with loopback addresses, a free port and the test's own data directory added.
func TestBookComponentLines(t *testing.T) {
	links := bookLinks(t)
	url, api := startBookAPIServer(t, links)
	for _, flag := range []string{"--etcd-servers", "--kubelet-port"} {
		if !strings.Contains(api.Output(), "flag="+flag) {
			t.Errorf("no warning about %s:\n%s", flag, api.Output())
		}
	}

	// With --master they join the control plane as members hosting the controllers
	// and the scheduler (TestBookSchedulerMember and TestBookControllerManagerMember
	// show them at work and taken over).
	for _, c := range []struct{ program, role string }{{"kube-controller-manager", "controllers"}, {"kube-scheduler", "scheduler"}} {
		startDaemon(t, filepath.Join(links, c.program), "--logtostderr=true", "--v=0", "--master="+url)
		waitRoleMembers(t, url, c.role, 1)
	}
	// kube-proxy for real would rewrite the host's iptables, which other tests share:
	// its book line is checked up to the start here (TestServiceKubeProxy runs it
	// for real on a host of its own).
	if out := runComponent(t, filepath.Join(links, "kube-proxy"), "--logtostderr=true", "--v=0", "--master="+url, "--version"); !strings.Contains(out, "kubeactor") {
		t.Errorf("kube-proxy --version: %q", out)
	}

	startDaemon(t, filepath.Join(links, "kubelet"), "--logtostderr=true", "--v=0", "--api_servers="+url,
		"--address=127.0.0.1", "--port=0", "--hostname_override=node1", "--allow_privileged=false",
		"--pod_infra_container_image=docker.intranet.com:5000/google_containers/pause:latest",
		"--simulate=1", "--read-only-port=0", "--healthz-port=0")
	bookRedisMaster(t, links, url, guestbook("redis-master-controller.yaml"))
}

// TestBookEnvFiles starts the components the way the book's unit files do: bash
// sources /etc/kubernetes/config and the component's file, and runs the component
// with the variables its unit passes. The files are the book's, with loopback
// addresses, a free port and the test's directories.
func TestBookEnvFiles(t *testing.T) {
	links := bookLinks(t)
	etc := t.TempDir()
	logDir := t.TempDir()
	port := strconv.Itoa(freePort(t))
	url := "http://127.0.0.1:" + port
	files := map[string]string{
		"config": `KUBE_LOGTOSTDERR="--logtostderr=false"
KUBE_LOG_LEVEL="--v=0"
KUBE_ALLOW_PRIV="--allow_privileged=false"
KUBE_MASTER="--master=` + url + `"
`,
		"apiserver": `KUBE_API_ADDRESS="--insecure-bind-address=127.0.0.1"
KUBE_API_PORT="--insecure-port=` + port + `"
KUBE_ETCD_SERVERS="--etcd_servers=http://127.0.0.1:4001"
KUBELET_PORT="--kubelet_port=10250"
KUBE_SERVICE_ADDRESSES="--service-cluster-ip-range=10.254.0.0/16"
KUBE_ADMISSION_CONTROL="--admission_control=NamespaceAutoProvision,LimitRanger,SecurityContextDeny"
KUBE_API_ARGS="--log-dir=` + logDir + ` --data-dir=` + t.TempDir() + ` --dns-port=0 --secure-port=0 --bind-address=127.0.0.1"
`,
		"controller-manager": `KUBE_CONTROLLER_MANAGER_ARGS="--log-dir=` + logDir + `"
`,
		"scheduler": `KUBE_SCHEDULER_ARGS="--log-dir=` + logDir + `"
`,
		"kubelet": `KUBELET_ADDRESS="--address=127.0.0.1"
KUBELET_PORT="--port=0"
KUBELET_HOSTNAME="--hostname_override=node1"
KUBELET_API_SERVER="--api_servers=` + url + `"
KUBELET_ARGS="--pod_infra_container_image=docker.intranet.com:5000/google_containers/pause:latest --log-dir=` + logDir + ` --simulate=1 --read-only-port=0 --healthz-port=0"
`,
		"proxy": `KUBE_PROXY_ARGS="--log-dir=` + logDir + ` --version"
`,
	}
	for name, content := range files {
		writeFile(t, etc, name, content)
	}
	unit := func(file, program, vars string) []string {
		return []string{"-c", fmt.Sprintf("set -a; . %s/config; . %s/%s; exec %s/%s %s", etc, etc, file, links, program, vars)}
	}
	// The apiserver's unit is Type=notify: systemd waits for READY=1.
	notify := filepath.Join(t.TempDir(), "notify")
	sd, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	t.Setenv("NOTIFY_SOCKET", notify)
	api := startDaemon(t, "bash", unit("apiserver", "kube-apiserver",
		"$KUBE_LOGTOSTDERR $KUBE_LOG_LEVEL $KUBE_ETCD_SERVERS $KUBE_API_ADDRESS $KUBE_API_PORT $KUBELET_PORT $KUBE_ALLOW_PRIV $KUBE_SERVICE_ADDRESSES $KUBE_ADMISSION_CONTROL $KUBE_API_ARGS")...)
	waitReady(t, url, api)
	os.Unsetenv("NOTIFY_SOCKET")
	_ = sd.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 64)
	if n, err := sd.Read(buf); err != nil || string(buf[:n]) != "READY=1" {
		t.Errorf("systemd notification %q, %v; want READY=1", buf[:n], err)
	}
	startDaemon(t, "bash", unit("controller-manager", "kube-controller-manager", "$KUBE_LOGTOSTDERR $KUBE_LOG_LEVEL $KUBE_MASTER $KUBE_CONTROLLER_MANAGER_ARGS")...)
	startDaemon(t, "bash", unit("scheduler", "kube-scheduler", "$KUBE_LOGTOSTDERR $KUBE_LOG_LEVEL $KUBE_MASTER $KUBE_SCHEDULER_ARGS")...)
	waitRoleMembers(t, url, "controllers", 1)
	waitRoleMembers(t, url, "scheduler", 1)
	runComponent(t, "bash", unit("proxy", "kube-proxy", "$KUBE_LOGTOSTDERR $KUBE_LOG_LEVEL $KUBE_MASTER $KUBE_PROXY_ARGS")...)
	startDaemon(t, "bash", unit("kubelet", "kubelet",
		"$KUBE_LOGTOSTDERR $KUBE_LOG_LEVEL $KUBELET_API_SERVER $KUBELET_ADDRESS $KUBELET_PORT $KUBELET_HOSTNAME $KUBE_ALLOW_PRIV $KUBELET_ARGS")...)
	bookRedisMaster(t, links, url, guestbook("redis-master-controller.yaml"))

	// --logtostderr=false: each component logs to its own file in --log-dir.
	for _, c := range []struct{ component, want string }{
		{"kube-apiserver", "msg=serving"},
		{"kube-apiserver", "flag=--etcd-servers"},
		{"kube-controller-manager", "member of the control plane"},
		{"kube-scheduler", "member of the control plane"},
		{"kubelet", "nodes registered"},
	} {
		data, err := os.ReadFile(filepath.Join(logDir, c.component+".INFO"))
		if err != nil || !strings.Contains(string(data), c.want) {
			t.Errorf("%s.INFO: %v, want %q in:\n%s", c.component, err, c.want, data)
		}
	}
}

// TestMakeInstallLinks runs `make install` (its build taken as done, the binary under
// test installed) into a prefix of the test's: kubeactor and a link to it under each
// of the book's names, each run as its component; a kubectl that is a real file is
// kept.
func TestMakeInstallLinks(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skipf("skipped: no make: %v", err)
	}
	prefix := t.TempDir()
	bin := filepath.Join(prefix, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, bin, "kubectl", "#!/bin/sh\necho a real kubectl\n")
	out, err := exec.Command("make", "-C", "..", "-o", "build", "install", "PREFIX="+prefix, "BIN="+Binary(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kept "+filepath.Join(bin, "kubectl")) {
		t.Errorf("make install did not say it kept the real kubectl:\n%s", out)
	}
	for _, c := range bookComponents {
		p := filepath.Join(bin, c)
		target, err := os.Readlink(p)
		if c == "kubectl" {
			if err == nil {
				t.Errorf("the real kubectl was replaced by a link to %s", target)
			}
			continue
		}
		if err != nil || target != "kubeactor" {
			t.Errorf("%s: link to %q, %v; want kubeactor", c, target, err)
			continue
		}
		if got := runComponent(t, p, "--version"); !strings.Contains(got, "kubeactor") {
			t.Errorf("%s --version: %q", c, got)
		}
	}
}
