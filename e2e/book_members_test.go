package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/gateway"
)

// The log lines of the actor system's supervisor when a movable singleton (the
// scheduler, the pod GC) starts or stops in a process (actors/system.go).
const (
	singletonStarted = `msg="singleton started on this member" actor=scheduler`
	singletonStopped = `msg="singleton stopped on this member: another runs it" actor=scheduler`
)

// roleMembers lists the members of role that the server at url sees as reachable
// and counts in its actor cluster (so places their actors there), in the order
// they joined.
func roleMembers(url, role string) ([]string, error) {
	var list gateway.MemberList
	if err := getJSON(url+"/kubeactor/v1/members", &list); err != nil {
		return nil, err
	}
	var names []string
	for _, m := range list.Items {
		if m.Meta["role"] == role && m.Reachable && m.Actors {
			if m.Role != "learner" {
				return nil, fmt.Errorf("member %s of role %s is a %s, want a learner (non-voter)", m.Name, role, m.Role)
			}
			names = append(names, m.Name)
		}
	}
	return names, nil
}

// serverName is the name of the (one) server at url.
func serverName(t *testing.T, url string) string {
	t.Helper()
	var list gateway.MemberList
	if err := getJSON(url+"/kubeactor/v1/members", &list); err != nil {
		t.Fatal(err)
	}
	for _, m := range list.Items {
		if m.Role == "leader" {
			return m.Name
		}
	}
	t.Fatalf("no leader in %+v", list)
	return ""
}

// waitRoleMembers waits until the server sees n reachable members of role.
func waitRoleMembers(t *testing.T, url, role string, n int) []string {
	t.Helper()
	var names []string
	Eventually(t, 60*time.Second, fmt.Sprintf("%d members of role %s", n, role), func() error {
		var err error
		if names, err = roleMembers(url, role); err != nil {
			return err
		}
		if len(names) != n {
			return fmt.Errorf("members %v", names)
		}
		return nil
	})
	return names
}

// createBoundPod creates a pod through the API and waits until it is bound to a node.
func createBoundPod(t *testing.T, url, name string) {
	t.Helper()
	p := testPod(name)
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/api/v1/namespaces/default/pods", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create pod %s: %s", name, resp.Status)
	}
	Eventually(t, 60*time.Second, "pod "+name+" bound", func() error {
		var got corev1.Pod
		if err := getJSON(url+"/api/v1/namespaces/default/pods/"+name, &got); err != nil {
			return err
		}
		if got.Spec.NodeName == "" {
			return fmt.Errorf("pod %s not bound", name)
		}
		return nil
	})
}

// waitLog waits until d's output has the line part want times at least.
func waitLog(t *testing.T, d *daemon, who, want string, times int) {
	t.Helper()
	Eventually(t, 30*time.Second, fmt.Sprintf("%s logs %q %d times", who, want, times), func() error {
		if n := strings.Count(d.Output(), want); n < times {
			return fmt.Errorf("%d times", n)
		}
		return nil
	})
}

// bookKubelet starts the book's kubelet line with one simulated node.
func bookKubelet(t *testing.T, links, url string) {
	t.Helper()
	startDaemon(t, filepath.Join(links, "kubelet"), "--logtostderr=true", "--v=0", "--api_servers="+url,
		"--address=127.0.0.1", "--port=0", "--hostname_override=node1", "--allow_privileged=false",
		"--pod_infra_container_image=docker.intranet.com:5000/google_containers/pause:latest",
		"--simulate=1", "--read-only-port=0", "--healthz-port=0")
}

// TestBookSchedulerMember runs the book's kube-scheduler line next to
// kube-apiserver: the scheduler actor moves into the kube-scheduler process (its
// log says it started there, the server's that it stopped there) and binds pods; a
// second kube-scheduler is a standby; kill -9 of the first makes the standby take
// over, and kill -9 of that one gives the scheduler back to the server. Pods are
// bound at every step.
func TestBookSchedulerMember(t *testing.T) {
	links := bookLinks(t)
	url, api := startBookAPIServer(t, links)
	bookKubelet(t, links, url)
	waitLog(t, api, "kube-apiserver", singletonStarted, 1) // alone, the server schedules
	createBoundPod(t, url, "before")

	book := []string{"--logtostderr=true", "--v=0", "--master=" + url, "--algorithm-provider=DefaultProvider"}
	first := startDaemon(t, filepath.Join(links, "kube-scheduler"), book...)
	names := waitRoleMembers(t, url, "scheduler", 1)
	waitLog(t, first, "kube-scheduler", singletonStarted, 1)
	waitLog(t, api, "kube-apiserver", singletonStopped, 1)
	if !strings.Contains(first.Output(), "member="+names[0]) {
		t.Errorf("kube-scheduler's log does not name it %s:\n%s", names[0], first.Output())
	}
	createBoundPod(t, url, "by-first")

	second := startDaemon(t, filepath.Join(links, "kube-scheduler"), book...)
	waitRoleMembers(t, url, "scheduler", 2)
	createBoundPod(t, url, "while-standby")
	if strings.Contains(second.Output(), singletonStarted) {
		t.Fatalf("the second kube-scheduler runs the scheduler while the first lives:\n%s", second.Output())
	}

	first.kill9(t)
	waitLog(t, second, "the standby kube-scheduler", singletonStarted, 1)
	createBoundPod(t, url, "by-second")
	if n := strings.Count(api.Output(), singletonStarted); n != 1 {
		t.Errorf("the server started the scheduler %d times while a kube-scheduler lived, want once (alone)", n)
	}

	second.kill9(t)
	waitLog(t, api, "kube-apiserver", singletonStarted, 2) // the server takes it back
	createBoundPod(t, url, "by-server")
}

// rcCreators are the members that reported the SuccessfulCreate events of rc's
// pods (event source.host).
func rcCreators(url, rc string) (map[string]int, error) {
	var list corev1.EventList
	if err := getJSON(url+"/api/v1/namespaces/default/events", &list); err != nil {
		return nil, err
	}
	hosts := map[string]int{}
	for _, ev := range list.Items {
		if ev.Reason == "SuccessfulCreate" && ev.InvolvedObject.Name == rc {
			hosts[ev.Source.Host] += int(ev.Count)
		}
	}
	return hosts, nil
}

// cmFlags are the book's kube-controller-manager flags with the node lifecycle made
// short, so that a node's failure plays out in seconds (a server with the same short
// flags plays it out the same way once it hosts the node controller again).
var cmFlags = append([]string{"--logtostderr=true", "--v=2"}, fastNodeLifecycle...)

// The log lines that show where a controller ran: the evictor's (actors/evictor.go),
// an object actor's write at --v=2 (actors/object.go), and a manager's when the
// members change (actors/manager.go).
const (
	evictingPods = `msg="evicting pods"`
	persisted    = `msg=persisted `
	placedHere   = `msg="object actors placed"`
)

// wrote is the log line part of an object actor's write of the object.
func wrote(kind, ns, name, op string) string {
	if ns == "" {
		return persisted + "kind=" + kind + " name=" + name + " op=" + op
	}
	return persisted + "kind=" + kind + " name=" + name + " namespace=" + ns + " op=" + op
}

// postObject creates obj at the API path and fails the test unless it is created.
// A 503 or 504 (a request routed to a member that had just gone, while the members
// change) is tried again, as its Retry-After asks; a 409 after such a try means the
// first one was done.
func postObject(t *testing.T, url, path string, obj any) {
	t.Helper()
	body, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	retried := false
	Eventually(t, 30*time.Second, "POST "+path, func() error {
		resp, err := http.Post(url+path, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		switch {
		case resp.StatusCode == http.StatusCreated, resp.StatusCode == http.StatusConflict && retried:
			return nil
		case resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
			retried = true
			return fmt.Errorf("%s %s", resp.Status, msg)
		}
		t.Fatalf("POST %s: %s %s", path, resp.Status, msg)
		return nil
	})
}

// serviceServed waits until the service has a cluster IP of the book's range and
// endpoints that list a pod.
func serviceServed(t *testing.T, url, name string) {
	t.Helper()
	Eventually(t, 30*time.Second, "service "+name+"'s cluster IP and endpoints", func() error {
		var svc corev1.Service
		if err := getJSON(url+"/api/v1/namespaces/default/services/"+name, &svc); err != nil {
			return err
		}
		if !strings.HasPrefix(svc.Spec.ClusterIP, "10.254.") {
			return fmt.Errorf("cluster IP %q", svc.Spec.ClusterIP)
		}
		var eps corev1.Endpoints
		if err := getJSON(url+"/api/v1/namespaces/default/endpoints/"+name, &eps); err != nil {
			return err
		}
		if len(eps.Subsets) == 0 || len(eps.Subsets[0].Addresses) == 0 {
			return fmt.Errorf("endpoints %+v", eps.Subsets)
		}
		return nil
	})
}

// accountToken creates a service account and waits until it lists a token secret
// that holds a token.
func accountToken(t *testing.T, url, name string) {
	t.Helper()
	postObject(t, url, "/api/v1/namespaces/default/serviceaccounts",
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{Kind: "ServiceAccount", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name}})
	Eventually(t, 30*time.Second, "service account "+name+"'s token", func() error {
		var sa corev1.ServiceAccount
		if err := getJSON(url+"/api/v1/namespaces/default/serviceaccounts/"+name, &sa); err != nil {
			return err
		}
		for _, ref := range sa.Secrets {
			var sec corev1.Secret
			if err := getJSON(url+"/api/v1/namespaces/default/secrets/"+ref.Name, &sec); err != nil {
				return err
			}
			if sec.Type == corev1.SecretTypeServiceAccountToken && len(sec.Data["token"]) > 0 {
				return nil
			}
		}
		return fmt.Errorf("secrets %v", sa.Secrets)
	})
}

// evictedFrom binds a pod to node, stops the node's kubelet and waits until the pod
// is evicted and the node's NodeNotReady event names host (the member whose node
// actor saw the heartbeats stop).
func evictedFrom(t *testing.T, url, node, host string, kubelet *daemon) {
	t.Helper()
	p := testPod("on-" + node)
	p.Spec.NodeName = node
	postObject(t, url, "/api/v1/namespaces/default/pods", p)
	kubelet.kill9(t)
	Eventually(t, 60*time.Second, "the pod of "+node+" evicted", func() error {
		var got corev1.Pod
		resp, err := http.Get(url + "/api/v1/namespaces/default/pods/on-" + node)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return nil
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			return err
		}
		if got.DeletionTimestamp == nil {
			return fmt.Errorf("pod on %s not deleted", node)
		}
		return nil
	})
	Eventually(t, 30*time.Second, "NodeNotReady of "+node+" from "+host, func() error {
		var list corev1.EventList
		if err := getJSON(url+"/api/v1/events", &list); err != nil {
			return err
		}
		var from []string
		for _, ev := range list.Items {
			if ev.Reason == "NodeNotReady" && ev.InvolvedObject.Name == node {
				if ev.Source.Host == host {
					return nil
				}
				from = append(from, ev.Source.Host)
			}
		}
		return fmt.Errorf("NodeNotReady from %v", from)
	})
}

// simKubelet starts the book's kubelet line with one simulated node, <prefix>-0,
// that posts its status every 500ms (the short node lifecycle's grace period is 2s).
func simKubelet(t *testing.T, links, url, prefix string) *daemon {
	t.Helper()
	return startDaemon(t, filepath.Join(links, "kubelet"), "--logtostderr=true", "--v=0", "--api_servers="+url,
		"--address=127.0.0.1", "--port=0", "--simulate=1", "--name-prefix="+prefix, "--read-only-port=0",
		"--healthz-port=0", "--node-status-update-frequency=500ms")
}

// writeSigningKey writes a new RSA key (PEM) for service-account tokens, as the
// book gives kube-controller-manager its --service_account_private_key_file.
func writeSigningKey(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "server.key")
	data := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// stop ends the component with SIGTERM and waits for it.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop on SIGTERM", filepath.Base(d.cmd.Path))
	}
}

// TestBookControllerManagerMember runs the book's kube-controller-manager line next
// to kube-apiserver, with the book's --service_account_private_key_file and a short
// node lifecycle. Every controller runs in the kube-controller-manager process: the
// book's first RC's pods are created there (their SuccessfulCreate events name the
// member), a service gets its cluster IP there and endpoints, a service account its
// token, and when a node's kubelet dies its NodeNotReady event names the member and
// the member's evictor deletes its pods. After kill -9 the server takes every
// controller back and does the same itself. A kube-controller-manager started again
// with the same --name rejoins and takes them over again, and it lives through a
// restart of kube-apiserver.
func TestBookControllerManagerMember(t *testing.T) {
	links := bookLinks(t)
	key := writeSigningKey(t)
	port, data := freePort(t), t.TempDir()
	startAPI := func() (string, *daemon) {
		return startBookAPIServerOn(t, links, port, data, append([]string{"--service-account-private-key-file=" + key}, fastNodeLifecycle...)...)
	}
	url, api := startAPI()
	server := serverName(t, url)
	node1, node2 := simKubelet(t, links, url, "node1"), simKubelet(t, links, url, "node2") // node1-0, node2-0
	cmArgs := append(append([]string{}, cmFlags...), "--master="+url, "--name=kcm-1", "--terminated-pod-gc-threshold=100",
		"--service_account_private_key_file="+key)
	cm := startDaemon(t, filepath.Join(links, "kube-controller-manager"), cmArgs...)
	if names := waitRoleMembers(t, url, "controllers", 1); names[0] != "kcm-1" {
		t.Fatalf("controllers member %v, want kcm-1", names)
	}
	waitLog(t, cm, "kube-controller-manager", `msg="singleton started on this member" actor=podgc`, 1)
	waitLog(t, cm, "kube-controller-manager", `msg="singleton started on this member" actor=evictor`, 1)
	waitLog(t, api, "kube-apiserver", `msg="singleton stopped on this member: another runs it" actor=evictor`, 1)

	// Replication: the book's first RC.
	bookRedisMaster(t, links, url, guestbook("redis-master-controller.yaml"))
	Eventually(t, 30*time.Second, "the RC's pod created by kube-controller-manager", func() error {
		hosts, err := rcCreators(url, "redis-master")
		if err != nil {
			return err
		}
		if hosts["kcm-1"] < 1 || len(hosts) != 1 {
			return fmt.Errorf("SuccessfulCreate by %v, want kcm-1 only", hosts)
		}
		return nil
	})
	kubectl := filepath.Join(links, "kubectl")
	home := t.TempDir()
	kc := func(args ...string) error {
		cmd := exec.Command(kubectl, append([]string{"-s", url}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	// Endpoints and service addresses: the book's redis-master service.
	if err := kc("create", "-f", guestbook("redis-master-service.yaml")); err != nil {
		t.Fatal(err)
	}
	serviceServed(t, url, "redis-master")
	waitLog(t, cm, "kube-controller-manager", wrote("services", "default", "redis-master", "create"), 1)
	// Service accounts and tokens.
	accountToken(t, url, "builder")
	waitLog(t, cm, "kube-controller-manager", wrote("serviceaccounts", "default", "builder", "update"), 1)
	// The node controller and the evictor.
	evictedFrom(t, url, "node1-0", "kcm-1", node1)
	waitLog(t, cm, "kube-controller-manager", evictingPods+" node=node1-0", 1)
	for _, line := range []string{evictingPods, wrote("services", "default", "redis-master", "create"),
		wrote("serviceaccounts", "default", "builder", "update")} {
		if strings.Contains(api.Output(), line) {
			t.Errorf("kube-apiserver ran a controller while kube-controller-manager lived: %q", line)
		}
	}

	// kill -9 and the same --name again at once (as systemd's Restart= does): the
	// member rejoins (the leader updates its Raft entry to its new addresses) and
	// hosts the controllers again.
	cm.kill9(t)
	cm = startDaemon(t, filepath.Join(links, "kube-controller-manager"), cmArgs...)
	waitLog(t, cm, "the restarted kube-controller-manager", `msg="member of the control plane"`, 1)
	if names := waitRoleMembers(t, url, "controllers", 1); names[0] != "kcm-1" {
		t.Fatalf("controllers member %v, want kcm-1", names)
	}
	accountToken(t, url, "after-rejoin")
	waitLog(t, cm, "the rejoined kube-controller-manager", wrote("serviceaccounts", "default", "after-rejoin", "update"), 1)

	// kube-apiserver restarts (same data directory and port): the member lives on,
	// reaches it again at the peer address the server keeps (cli/server.go), and
	// hosts the controllers.
	api.stop(t)
	url, api = startAPI()
	if names := waitRoleMembers(t, url, "controllers", 1); names[0] != "kcm-1" {
		t.Fatalf("controllers member %v after the restart, want kcm-1", names)
	}
	if name := serverName(t, url); name != server {
		t.Fatalf("the restarted kube-apiserver is %s, was %s", name, server)
	}
	accountToken(t, url, "after-restart")
	waitLog(t, cm, "kube-controller-manager across the restart", wrote("serviceaccounts", "default", "after-restart", "update"), 1)

	// kill -9 for good: the server takes every controller back.
	cm.kill9(t)
	waitRoleMembers(t, url, "controllers", 0)
	waitLog(t, api, "kube-apiserver", `msg="singleton started on this member" actor=evictor`, 1)
	for _, kind := range []string{"replicationcontrollers", "services", "nodes", "serviceaccounts", "namespaces"} {
		tookBack := regexp.MustCompile(regexp.QuoteMeta(placedHere) + ` hosted=\d+ kind=` + kind + ` member=` + regexp.QuoteMeta(server) + ` started=[1-9]`)
		Eventually(t, 30*time.Second, "kube-apiserver takes back the "+kind, func() error {
			if !tookBack.MatchString(api.Output()) {
				return fmt.Errorf("no line %s", tookBack)
			}
			return nil
		})
	}
	Eventually(t, 30*time.Second, "scale to 2", func() error { return kc("scale", "rc", "redis-master", "--replicas=2") })
	Eventually(t, 30*time.Second, "the scale-up's pod created by the server", func() error {
		hosts, err := rcCreators(url, "redis-master")
		if err != nil {
			return err
		}
		if hosts[server] < 1 {
			return fmt.Errorf("SuccessfulCreate by %v, want one by the server %s", hosts, server)
		}
		return nil
	})
	svc := strings.Replace(mustRead(t, guestbook("redis-master-service.yaml")), "name: redis-master\n  labels", "name: redis-again\n  labels", 1)
	if err := kcIn(kc, t, svc); err != nil {
		t.Fatal(err)
	}
	serviceServed(t, url, "redis-again")
	accountToken(t, url, "deployer")
	evictedFrom(t, url, "node2-0", server, node2)
	waitLog(t, api, "kube-apiserver", evictingPods+" node=node2-0", 1)
}

// kcIn runs kubectl create -f - with manifest on its standard input.
func kcIn(kc func(args ...string) error, t *testing.T, manifest string) error {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		return err
	}
	return kc("create", "-f", f)
}
