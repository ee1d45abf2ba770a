package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The guestbook's images (images/build.sh builds them into the main engine): the
// only images the fresh engine is given.
var guestbookImages = []string{"kubeactor/redis:latest", "kubeactor/redis-slave:latest", "kubeactor/guestbook-frontend:latest"}

// TestFreshEngineGuestbook is the quick start on a machine that has only the binary
// and Docker: a Docker engine of its own (a second dockerd with its own data root,
// containerd and bridge), holding nothing but the guestbook's images (no pause
// image, no busybox), and `kubeactor up` with every default, the README's command,
// pointed at it with DOCKER_HOST. The agent builds its pause image in that engine
// from its own binary; the book's six files run; a message goes through the
// frontend's NodePort to Redis and back; and a guestbook pod resolves
// redis-master and redis-master.default.svc.cluster.local to the service's cluster
// IP through the cluster DNS (the kube-dns service's address in its resolv.conf).
//
// The engine and `up` run in a network namespace of their own, a second host on
// this machine: the engine's docker0, its iptables rules, the service proxy's
// rules and `up`'s default ports (8080, 6443, 53, 10250, 30001) are all its own,
// so the tests beside this one, and the main engine, see none of them.
func TestFreshEngineGuestbook(t *testing.T) {
	bin := Binary(t)
	if out, err := exec.Command("docker", append([]string{"image", "inspect", "--format", "{{.Id}}"}, guestbookImages...)...).CombinedOutput(); err != nil {
		t.Fatalf("the guestbook's images are not in the main engine (make images): %v\n%s", err, out)
	}
	e := startFreshEngine(t)

	// Only the guestbook's images, copied from the main engine.
	e.load(t, guestbookImages...)
	have := e.images(t)
	want := append([]string(nil), guestbookImages...)
	sort.Strings(want)
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Fatalf("the fresh engine holds %v, want only %v", have, want)
	}

	// The README's quick start: `kubeactor up`, no flag but the data dir (its
	// default is under $HOME, which is the test's too).
	home := filepath.Join(e.dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	up := startProcess(t, "nsenter", "--net="+e.netnsPath(), "env", "DOCKER_HOST="+e.host(), "HOME="+home,
		bin, "up", "--data-dir", filepath.Join(e.dir, "data"), "--log-format", "json")
	Eventually(t, 60*time.Second, "the API answers /readyz in the fresh host", func() error {
		if !up.alive() {
			return errNotRunning
		}
		r := e.kubectl("", "get", "--raw", "/readyz")
		if r.Err != nil {
			return fmt.Errorf("%v %s", r.Err, r.Stderr)
		}
		return nil
	})
	Eventually(t, 60*time.Second, "the node Ready", func() error {
		r := e.kubectl("", "get", "nodes", "-o", `jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{end}`)
		if r.Err != nil || strings.TrimSpace(r.Stdout) != "True" {
			return fmt.Errorf("%v %q %s", r.Err, r.Stdout, r.Stderr)
		}
		return nil
	})

	// The agent made the pause image in the fresh engine, from its own binary.
	if !strings.Contains(up.Logs(), "built the pod infra image") {
		t.Errorf("no log line of up says the pause image was built")
	}
	out, err := e.docker("image", "inspect", "--format", "{{json .Config.Entrypoint}} {{len .RootFS.Layers}} {{.Size}}", imagePause)
	if err != nil {
		t.Fatalf("the pause image is not in the fresh engine: %v %s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	// One layer whose only file is the binary, run as /pause.
	f := strings.Fields(out)
	if len(f) != 3 || f[0] != `["/pause"]` || f[1] != "1" {
		t.Fatalf("pause image in the fresh engine: %q", out)
	}
	if size, _ := strconv.ParseInt(f[2], 10, 64); size < fi.Size() || size > fi.Size()+64<<10 {
		t.Errorf("pause image of %d bytes, the binary has %d: not built from it", size, fi.Size())
	}

	for _, f := range []string{"redis-master-controller.yaml", "redis-master-service.yaml",
		"redis-slave-controller.yaml", "redis-slave-service.yaml",
		"frontend-controller.yaml", "frontend-service.yaml"} {
		e.mustKubectl(t, "", "create", "-f", filepath.Join("testdata", "guestbook-local", f))
	}
	var pods corev1.PodList
	Eventually(t, 180*time.Second, "six guestbook pods Running and Ready", func() error {
		r := e.kubectl("", "get", "pods", "-o", "json")
		if r.Err != nil {
			return fmt.Errorf("%v %s", r.Err, r.Stderr)
		}
		pods = corev1.PodList{}
		if err := json.Unmarshal([]byte(r.Stdout), &pods); err != nil {
			return err
		}
		var readyPods []string
		for i := range pods.Items {
			if ready(&pods.Items[i]) == nil {
				readyPods = append(readyPods, pods.Items[i].Name)
			}
		}
		if len(readyPods) != 6 {
			return fmt.Errorf("%d of %d pods ready: %v", len(readyPods), len(pods.Items), readyPods)
		}
		return nil
	})
	// Their containers, each pod's infra container on the built pause image, are
	// in the fresh engine.
	for _, image := range []string{imagePause, "kubeactor/redis:latest", "kubeactor/redis-slave:latest", "kubeactor/guestbook-frontend:latest"} {
		out, err := e.docker("ps", "-q", "--filter", "ancestor="+image)
		n := len(strings.Fields(out))
		wantN := map[string]int{imagePause: 6, "kubeactor/redis:latest": 1, "kubeactor/redis-slave:latest": 2, "kubeactor/guestbook-frontend:latest": 3}[image]
		if err != nil || n != wantN {
			t.Errorf("%d running containers of %s in the fresh engine, want %d: %v %s", n, image, wantN, err, out)
		}
	}

	// Nothing else came into the engine: the guestbook's images and the pause image.
	want = append(want, imagePause)
	sort.Strings(want)
	if have := e.images(t); strings.Join(have, " ") != strings.Join(want, " ") {
		t.Errorf("the fresh engine holds %v, want %v", have, want)
	}

	// The guestbook answers on the fresh host's NodePort 30001.
	front := "http://" + e.ip + ":30001/"
	Eventually(t, 60*time.Second, "set through NodePort 30001", func() error {
		body, err := httpGet(front + "?cmd=set&key=messages&value=fresh")
		if err != nil || !strings.Contains(body, `"Updated"`) {
			return fmt.Errorf("%q %v", body, err)
		}
		return nil
	})
	Eventually(t, 60*time.Second, "get through NodePort 30001", func() error {
		body, err := httpGet(front + "?cmd=get&key=messages")
		if err != nil || !strings.Contains(body, `"fresh"`) {
			return fmt.Errorf("%q %v", body, err)
		}
		return nil
	})

	// A redis-slave pod (busybox is in the Redis image) resolves the master's
	// service through the cluster DNS, by its short name (the search path) and by
	// its full name.
	dnsIP := e.mustKubectl(t, "", "get", "service", "kube-dns", "-n", "kube-system", "-o", "jsonpath={.spec.clusterIP}")
	masterIP := e.mustKubectl(t, "", "get", "service", "redis-master", "-o", "jsonpath={.spec.clusterIP}")
	if dnsIP == "" || masterIP == "" {
		t.Fatalf("cluster IPs: kube-dns %q, redis-master %q", dnsIP, masterIP)
	}
	var slave string
	for _, p := range pods.Items {
		if p.Labels["name"] == "redis-slave" {
			slave = p.Name
		}
	}
	if slave == "" {
		t.Fatalf("no redis-slave pod among %d", len(pods.Items))
	}
	resolv := e.mustKubectl(t, "", "exec", slave, "--", "cat", "/etc/resolv.conf")
	if !strings.Contains(resolv, "nameserver "+dnsIP+"\n") || !strings.Contains(resolv, "search default.svc.cluster.local svc.cluster.local cluster.local") {
		t.Fatalf("resolv.conf of %s:\n%s", slave, resolv)
	}
	for _, name := range []string{"redis-master", "redis-master.default.svc.cluster.local"} {
		Eventually(t, 30*time.Second, "nslookup "+name+" in "+slave, func() error {
			r := e.kubectl("", "exec", slave, "--", "nslookup", name)
			server, addrs := nslookupAnswer(r.Stdout)
			if server != dnsIP+":53" || len(addrs) != 1 || addrs[0] != masterIP {
				return fmt.Errorf("server %q, addresses %v, want %s from %s:53 (%v %q %q)", server, addrs, masterIP, dnsIP, r.Err, r.Stdout, r.Stderr)
			}
			return nil
		})
	}
}

// nslookupAnswer reads busybox nslookup's output: the server asked, and the
// addresses of the answers (the lines after a Name: line).
func nslookupAnswer(out string) (server string, addrs []string) {
	named := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			named = false
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Name":
			named = true
		case "Address":
			if named {
				addrs = append(addrs, v)
			} else if server == "" {
				server = v
			}
		}
	}
	return server, addrs
}

// errNotRunning: a process the test waits on has exited.
var errNotRunning = errors.New("the process exited")

// alive tells whether the process has not exited yet.
func (a *Agent) alive() bool {
	select {
	case <-a.done:
		return false
	default:
		return true
	}
}

// freshEngine is a Docker engine of its own for one test: the machine's dockerd
// with its own data root, exec root (its containerd's too), socket and pid file
// under a short directory (unix socket paths have a 108-byte limit), running in a
// network namespace of its own. The namespace is joined to this one by a veth
// pair (ip on its side, .1 on ours) and masqueraded out, so the engine reaches
// what the machine reaches (its resolver answers a pull of a `:latest` image as
// fast as the main engine's).
type freshEngine struct {
	t    testing.TB
	dir  string // everything the engine writes
	ns   string // network namespace name
	ip   string // the namespace's address
	cmd  *exec.Cmd
	done chan struct{}
}

func (e *freshEngine) netnsPath() string { return "/run/netns/" + e.ns }
func (e *freshEngine) host() string      { return "unix://" + filepath.Join(e.dir, "docker.sock") }

// startFreshEngine starts the engine and waits until it answers; it is stopped and
// everything it made removed when the test ends.
func startFreshEngine(t testing.TB) *freshEngine {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a second Docker engine needs root (dockerd, network namespaces)")
	}
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		t.Skipf("no dockerd binary on this machine to start a second engine with: %v", err)
	}
	base := os.TempDir()
	if len(base) > 40 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "kaf")
	if err != nil {
		t.Fatal(err)
	}
	id := randHex(2)
	e := &freshEngine{t: t, dir: dir, ns: "kaf" + id, done: make(chan struct{})}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove the fresh engine's files: %v", err)
		}
	})
	e.network(t, id)

	// An empty configuration file: the machine's /etc/docker/daemon.json names the
	// main engine's data root.
	cfg := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	e.cmd = exec.Command("nsenter", "--net="+e.netnsPath(), dockerd,
		"--config-file", cfg,
		"--data-root", filepath.Join(dir, "root"),
		"--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"),
		"-H", e.host())
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	if err := e.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start dockerd: %v", err)
	}
	go func() { _ = e.cmd.Wait(); logf.Close(); close(e.done) }()
	t.Cleanup(e.stop)
	Eventually(t, 60*time.Second, "the fresh engine answers", func() error {
		select {
		case <-e.done:
			log, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
			t.Fatalf("dockerd exited: %v\n%s", e.cmd.ProcessState, log)
		default:
		}
		out, err := e.docker("info", "--format", "{{.ServerVersion}} {{.Driver}} {{.Images}}")
		if err != nil {
			return fmt.Errorf("%v %s", err, out)
		}
		t.Logf("fresh engine: %s", out)
		return nil
	})
	return e
}

// network makes the engine's network namespace, joined to this one by a veth pair
// on a /30 of 10.213.0.0/16 that no route of this namespace uses yet.
func (e *freshEngine) network(t testing.TB, id string) {
	t.Helper()
	routes, err := exec.Command("ip", "-4", "route").Output()
	if err != nil {
		t.Fatalf("ip route: %v", err)
	}
	var subnet string
	first, _ := strconv.ParseUint(id, 16, 16)
	for i := range 64 {
		s := fmt.Sprintf("10.213.%d", (int(first)+i)%256)
		if !strings.Contains(string(routes), s+".") {
			subnet = s
			break
		}
	}
	if subnet == "" {
		t.Fatalf("no free /30 in 10.213.0.0/16:\n%s", routes)
	}
	veth := "kafv" + id
	e.ip = subnet + ".2"
	runIP(t, "netns", "add", e.ns)
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", e.ns).Run()
		_ = exec.Command("ip", "link", "del", veth).Run()
	})
	runIP(t, "link", "add", veth, "type", "veth", "peer", "name", veth+"p")
	runIP(t, "link", "set", veth+"p", "netns", e.ns)
	runIP(t, "addr", "add", subnet+".1/30", "dev", veth)
	runIP(t, "link", "set", veth, "up")
	runIP(t, "-n", e.ns, "link", "set", veth+"p", "name", "eth0")
	runIP(t, "-n", e.ns, "addr", "add", e.ip+"/30", "dev", "eth0")
	runIP(t, "-n", e.ns, "link", "set", "eth0", "up")
	runIP(t, "-n", e.ns, "link", "set", "lo", "up")
	runIP(t, "-n", e.ns, "route", "add", "default", "via", subnet+".1")
	// Out to the machine's network: forwarded (the main engine's FORWARD policy is
	// DROP) and masqueraded.
	comment := []string{"-m", "comment", "--comment", "kubeactor e2e fresh engine"}
	for _, rule := range [][]string{
		{"-t", "filter", "FORWARD", "-i", veth, "-j", "ACCEPT"},
		{"-t", "filter", "FORWARD", "-o", veth, "-j", "ACCEPT"},
		{"-t", "nat", "POSTROUTING", "-s", subnet + ".0/30", "-j", "MASQUERADE"},
	} {
		rule = append(rule, comment...)
		add := append([]string{rule[0], rule[1], "-I"}, rule[2:]...)
		if out, err := exec.Command("iptables", add...).CombinedOutput(); err != nil {
			t.Fatalf("iptables %s: %v\n%s", strings.Join(add, " "), err, out)
		}
		del := append([]string{rule[0], rule[1], "-D"}, rule[2:]...)
		t.Cleanup(func() { _ = exec.Command("iptables", del...).Run() })
	}
}

// stop removes the engine's containers, stops the engine (SIGTERM, then SIGKILL
// with its containerd), and unmounts what it left mounted under its directory.
func (e *freshEngine) stop() {
	t := e.t
	if t.Failed() {
		log, _ := os.ReadFile(filepath.Join(e.dir, "dockerd.log"))
		if len(log) > 16<<10 {
			log = log[len(log)-16<<10:]
		}
		ps, _ := e.docker("ps", "-a")
		rules, _ := exec.Command("nsenter", "--net="+e.netnsPath(), "iptables-save").CombinedOutput()
		t.Logf("fresh engine containers:\n%s\nits namespace's iptables:\n%s\ndockerd log (tail):\n%s", ps, rules, log)
	}
	if ids, err := e.docker("ps", "-aq"); err == nil && strings.TrimSpace(ids) != "" {
		if out, err := e.docker(append([]string{"rm", "-f", "-v"}, strings.Fields(ids)...)...); err != nil {
			t.Logf("remove the fresh engine's containers: %v %s", err, out)
		}
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(60 * time.Second):
		t.Errorf("dockerd did not stop within 60s of SIGTERM")
		_ = e.cmd.Process.Kill()
		<-e.done
		// Its containerd outlives it then: stop it by the pid dockerd recorded.
		if b, err := os.ReadFile(filepath.Join(e.dir, "exec", "containerd", "containerd.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	for _, m := range mountsUnder(e.dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", m, err)
		}
	}
}

// mountsUnder lists the mount points at or under dir, deepest first.
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			out = append(out, f[4])
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// docker runs the docker client against the fresh engine.
func (e *freshEngine) docker(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", append([]string{"-H", e.host()}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// load copies images from the main engine into the fresh one (docker save | load).
func (e *freshEngine) load(t testing.TB, images ...string) {
	t.Helper()
	save := exec.Command("docker", append([]string{"save"}, images...)...)
	load := exec.Command("docker", "-H", e.host(), "load")
	pipe, err := save.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	load.Stdin = pipe
	var saveErr, loadOut bytes.Buffer
	save.Stderr = &saveErr
	load.Stdout, load.Stderr = &loadOut, &loadOut
	if err := save.Start(); err != nil {
		t.Fatalf("docker save: %v", err)
	}
	loadErr := load.Run()
	if err := save.Wait(); err != nil {
		t.Fatalf("docker save %v: %v\n%s", images, err, saveErr.String())
	}
	if loadErr != nil {
		t.Fatalf("docker load into the fresh engine: %v\n%s", loadErr, loadOut.String())
	}
}

// images lists the fresh engine's images as sorted repo:tag names.
func (e *freshEngine) images(t testing.TB) []string {
	t.Helper()
	out, err := e.docker("images", "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		t.Fatalf("docker images: %v %s", err, out)
	}
	names := strings.Fields(out)
	sort.Strings(names)
	return names
}

// kubectl runs the installed kubectl in the engine's network namespace against
// `up`'s default API address, http://127.0.0.1:8080.
func (e *freshEngine) kubectl(stdin string, args ...string) Result {
	home := filepath.Join(e.dir, "kubectl")
	return runCommand([]string{"HOME=" + home, "KUBECONFIG=", "KUBECACHEDIR=" + filepath.Join(home, "cache")}, stdin,
		"nsenter", append([]string{"--net=" + e.netnsPath(), "kubectl", "-s", "http://127.0.0.1:8080"}, args...)...)
}

// mustKubectl is kubectl that fails the test when it exits non-zero.
func (e *freshEngine) mustKubectl(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	return mustSucceed(t, e.kubectl(stdin, args...), args)
}
