package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The images the e2e suite runs; `make images` (images/build.sh) builds them.
const (
	imagePause      = "kubeactor/pause:latest"
	imageTestServer = "kubeactor/testserver:latest"
	imageBusybox    = "kubeactor/busybox:latest"
)

// dockerNode is a server with one Docker agent, for the tests of the node agent.
type dockerNode struct {
	t     testing.TB
	s     *Server
	agent *Agent
	name  string // node name
	root  string // the agent's --root-dir
	cs    kubernetes.Interface
	args  []string
}

// requireDocker fails the test when the engine or the images are missing: the e2e
// suite runs on a machine with Docker (CI builds the images first).
func requireDocker(t testing.TB) {
	t.Helper()
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", imagePause, imageTestServer, imageBusybox).CombinedOutput()
	if err != nil {
		t.Fatalf("the e2e suite needs the Docker engine and the images of `make images`: %v\n%s", err, out)
	}
}

// startDockerNode starts a server and a Docker agent with a node name of its own,
// and waits until the node is Ready. Every container of the node is removed when
// the test ends.
func startDockerNode(t testing.TB, extra ...string) *dockerNode {
	t.Helper()
	requireDocker(t)
	return startDockerNodeOn(t, StartServer(t, ""), extra...)
}

// startDockerNodeOn is startDockerNode against a server the test started.
func startDockerNodeOn(t testing.TB, s *Server, extra ...string) *dockerNode {
	t.Helper()
	n := &dockerNode{t: t, s: s, name: "e2e-" + randHex(4), root: t.TempDir()}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	n.cs = cs
	n.args = append([]string{"--node-name", n.name, "--port", "0", "--root-dir", n.root,
		"--node-status-update-frequency", "1s", "--sync-frequency", "2s"}, extra...)
	t.Cleanup(n.removeContainers)
	n.agent = startAgent(t, s, n.args...)
	Eventually(t, 60*time.Second, "node "+n.name+" Ready", func() error {
		node, err := cs.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", node.Status.Conditions)
	})
	return n
}

// removeContainers removes every container of the node.
func (n *dockerNode) removeContainers() {
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=io.kubeactor.node="+n.name).Output()
	if err != nil {
		return
	}
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		_ = exec.Command("docker", append([]string{"rm", "-f", "-v"}, ids...)...).Run()
	}
}

// create creates an object from YAML in namespace default.
func (n *dockerNode) create(doc string) {
	n.t.Helper()
	n.s.MustKubectl(n.t, doc, "create", "-f", "-")
}

// pod fetches a pod of namespace default.
func (n *dockerNode) pod(name string) (*corev1.Pod, error) {
	return n.cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
}

// waitPod polls the pod until check accepts it.
func (n *dockerNode) waitPod(name string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	n.t.Helper()
	var last *corev1.Pod
	Eventually(n.t, timeout, name+": "+what, func() error {
		p, err := n.pod(name)
		if err != nil {
			return err
		}
		last = p
		if err := check(p); err != nil {
			st, _ := json.Marshal(p.Status)
			return fmt.Errorf("%v (status %s)", err, st)
		}
		return nil
	})
	return last
}

func running(p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("phase %s", p.Status.Phase)
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return fmt.Errorf("container %s not running", c.Name)
		}
	}
	return nil
}

func ready(p *corev1.Pod) error {
	if err := running(p); err != nil {
		return err
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("not Ready")
}

// events lists the reasons and messages of the events about a pod.
func (n *dockerNode) events(pod string) string {
	list, err := n.cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range list.Items {
		fmt.Fprintf(&b, "%s %s: %s\n", e.Type, e.Reason, e.Message)
	}
	return b.String()
}

// httpGet fetches a URL's body with a short timeout.
func httpGet(url string) (string, error) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b), err
}

// dockerPS lists the names of the node's containers (running or not).
func (n *dockerNode) dockerPS(all bool) []string {
	args := []string{"ps", "--format", "{{.Names}}", "--filter", "label=io.kubeactor.node=" + n.name}
	if all {
		args = append(args, "-a")
	}
	out, err := exec.Command("docker", args...).Output()
	if err != nil {
		n.t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
