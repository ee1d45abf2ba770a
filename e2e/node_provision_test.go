package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDockerNodeProvisionsInfraImage: an agent whose pod infra image is not in the
// engine builds it from its own binary (no registry, no `make images`) and runs a
// pod on it. The image has a name of its own so that the tests running beside this
// one keep theirs; it is removed at the end.
func TestDockerNodeProvisionsInfraImage(t *testing.T) {
	image := "kubeactor/pause-selftest:" + randHex(4)
	_ = exec.Command("docker", "rmi", "-f", image).Run()
	if err := exec.Command("docker", "image", "inspect", image).Run(); err == nil {
		t.Fatalf("%s exists before the test", image)
	}
	// Registered before the node's clean-up, so it runs after its containers are gone.
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })

	n := startDockerNode(t, "--pod-infra-container-image", image)
	if !strings.Contains(n.agent.Logs(), "built the pod infra image") {
		t.Errorf("no log line says the image was built:\n%s", n.agent.Logs())
	}
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{json .Config.Entrypoint}} {{len .RootFS.Layers}}", image).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != `["/pause"] 1` {
		t.Fatalf("image %s: %v %s", image, err, out)
	}

	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: selfhosted
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: shell
    image: kubeactor/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 3600"]
`)
	p := n.waitPod("selfhosted", 60*time.Second, "Running", running)
	// The infra container runs the agent's binary as /pause, holding the pod's network.
	ps, err := exec.Command("docker", "ps", "--filter", "label=io.kubernetes.pod.uid="+string(p.UID),
		"--filter", "ancestor="+image, "--format", "{{.Command}} {{.Status}}").CombinedOutput()
	if err != nil || !strings.Contains(string(ps), "/pause") || !strings.Contains(string(ps), "Up") {
		t.Fatalf("infra container of the pod: %v %q", err, ps)
	}
	if p.Status.PodIP == "" {
		t.Errorf("no pod IP: %+v", p.Status)
	}
	// A second agent finds the image and builds nothing.
	n.agent.Stop(t)
	again := startAgent(t, n.s, n.args...)
	Eventually(t, 30*time.Second, "second agent up", func() error {
		if !strings.Contains(again.Logs(), "node registered") {
			return fmt.Errorf("not yet registered")
		}
		return nil
	})
	if strings.Contains(again.Logs(), "built the pod infra image") {
		t.Errorf("the image was built again:\n%s", again.Logs())
	}
}
