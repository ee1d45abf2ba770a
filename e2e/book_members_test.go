package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

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

// TestBookControllerManagerMember runs the book's kube-controller-manager line next
// to kube-apiserver: the book's first RC's actor runs in the kube-controller-manager
// process (its SuccessfulCreate events name that member); after kill -9 the server
// takes the RC back and creates the pods of a scale-up itself.
func TestBookControllerManagerMember(t *testing.T) {
	links := bookLinks(t)
	url, _ := startBookAPIServer(t, links)
	server := serverName(t, url)
	bookKubelet(t, links, url)
	cm := startDaemon(t, filepath.Join(links, "kube-controller-manager"), "--logtostderr=true", "--v=0", "--master="+url,
		"--node-monitor-grace-period=40s", "--pod-eviction-timeout=5m", "--terminated-pod-gc-threshold=100")
	names := waitRoleMembers(t, url, "controllers", 1)
	waitLog(t, cm, "kube-controller-manager", `msg="singleton started on this member" actor=podgc`, 1)
	bookRedisMaster(t, links, url, guestbook("redis-master-controller.yaml"))
	Eventually(t, 30*time.Second, "the RC's pod created by kube-controller-manager", func() error {
		hosts, err := rcCreators(url, "redis-master")
		if err != nil {
			return err
		}
		if hosts[names[0]] < 1 || len(hosts) != 1 {
			return fmt.Errorf("SuccessfulCreate by %v, want %s only", hosts, names[0])
		}
		return nil
	})

	cm.kill9(t)
	waitRoleMembers(t, url, "controllers", 0)
	kubectl := filepath.Join(links, "kubectl")
	home := t.TempDir()
	Eventually(t, 30*time.Second, "scale to 2", func() error {
		cmd := exec.Command(kubectl, "-s", url, "scale", "rc", "redis-master", "--replicas=2")
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
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
}
