package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDockerNodeRegisters(t *testing.T) {
	n := startDockerNode(t)
	node, err := n.cs.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info := node.Status.NodeInfo
	if !strings.HasPrefix(info.ContainerRuntimeVersion, "docker://") || info.KernelVersion == "" || info.OSImage == "" || info.KubeletVersion == "" {
		t.Errorf("nodeInfo = %+v, want docker://<version>, kernel, OS and agent version", info)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		if q, ok := node.Status.Capacity[r]; !ok || q.Sign() <= 0 {
			t.Errorf("capacity %s = %v, want a positive quantity", r, node.Status.Capacity)
		}
		if _, ok := node.Status.Allocatable[r]; !ok {
			t.Errorf("allocatable lacks %s", r)
		}
	}
	var internal bool
	for _, a := range node.Status.Addresses {
		internal = internal || a.Type == corev1.NodeInternalIP && a.Address != ""
	}
	if !internal || node.Status.DaemonEndpoints.KubeletEndpoint.Port == 0 {
		t.Errorf("addresses %v, daemon port %d: want an InternalIP and the agent's port", node.Status.Addresses, node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	}
	out := n.s.MustKubectl(t, "", "get", "node", n.name, "-o", "wide")
	if !strings.Contains(out, "Ready") || !strings.Contains(out, "docker://") {
		t.Errorf("kubectl get node -o wide:\n%s", out)
	}
	// The kubelet's read-only port (10255) and healthz port (10248), at their defaults.
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:10255/pods", `"kind":"PodList"`},
		{"http://127.0.0.1:10255/healthz", "ok"},
		{"http://127.0.0.1:10255/spec", "num_cores"},
		{"http://127.0.0.1:10255/stats", `"pods"`},
		{"http://127.0.0.1:10255/metrics", "kubelet_running_pods"},
		{"http://127.0.0.1:10248/healthz", "ok"},
	} {
		resp, err := http.Get(c.url)
		if err != nil {
			t.Errorf("GET %s: %v", c.url, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s = %d %.200q, want %q", c.url, resp.StatusCode, body, c.want)
		}
	}
	if resp, err := http.Post("http://127.0.0.1:10255/run/default/web/web?cmd=ls", "", nil); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("the read-only port runs commands: %d", resp.StatusCode)
		}
	}
}

const webPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: web
    image: kubeactor/testserver:latest
    ports:
    - containerPort: 8080
      hostPort: %d
    env:
    - name: MY_POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: MY_POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    - name: MY_NODE
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
    - name: GREETING
      value: hello-$(MY_POD_NAME)
    readinessProbe:
      httpGet: {path: /healthz, port: 8080}
      periodSeconds: 1
`

const redisService = `apiVersion: v1
kind: Service
metadata:
  name: redis-master
spec:
  selector: {app: redis}
  ports:
  - port: 6379
    targetPort: 6379
`

// TestDockerPodRuns runs the book's pod shape: an infra container holding the
// network and the hostPort, the app container in its namespaces, with the service
// variables and the downward API in its environment.
func TestDockerPodRuns(t *testing.T) {
	n := startDockerNode(t)
	n.create(redisService) // exists before the pod: its variables are injected
	hostPort := 20000 + int(time.Now().UnixNano()%9000)
	n.create(fmt.Sprintf(webPod, hostPort))
	p := n.waitPod("web", 60*time.Second, "Ready", ready)

	if p.Status.PodIP == "" || p.Status.HostIP == "" || p.Status.StartTime == nil {
		t.Errorf("status lacks podIP/hostIP/startTime: %+v", p.Status)
	}
	cs := p.Status.ContainerStatuses
	if len(cs) != 1 || !strings.HasPrefix(cs[0].ContainerID, "docker://") || cs[0].ImageID == "" || cs[0].Image != imageTestServer || !cs[0].Ready {
		t.Errorf("containerStatuses = %+v", cs)
	}

	// The book's names: k8s_POD.<hash>_<pod>_<ns>_<uid>_<rand> and k8s_<name>.<hash>_...
	var infra, app bool
	for _, name := range n.dockerPS(false) {
		infix := fmt.Sprintf("_web_default_%s_", p.UID)
		infra = infra || strings.HasPrefix(name, "k8s_POD.") && strings.Contains(name, infix)
		app = app || strings.HasPrefix(name, "k8s_web.") && strings.Contains(name, infix)
	}
	if !infra || !app {
		t.Errorf("docker ps names %v: want the infra and app containers in the book's format", n.dockerPS(false))
	}
	// The container's events name it as kubectl describe shows them.
	Eventually(t, 30*time.Second, "a Started event about spec.containers{web}", func() error {
		list, err := n.cs.CoreV1().Events("default").List(context.Background(),
			metav1.ListOptions{FieldSelector: "involvedObject.name=web,involvedObject.fieldPath=spec.containers{web},reason=Started"})
		if err != nil || len(list.Items) == 0 {
			return fmt.Errorf("%v; events:\n%s", err, n.events("web"))
		}
		return nil
	})

	svc, err := n.cs.CoreV1().Services("default").Get(context.Background(), "redis-master", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := httpGet("http://" + p.Status.PodIP + ":8080/env")
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("env %q: %v", body, err)
	}
	ip := svc.Spec.ClusterIP
	want := map[string]string{
		"REDIS_MASTER_SERVICE_HOST":        ip,
		"REDIS_MASTER_SERVICE_PORT":        "6379",
		"REDIS_MASTER_PORT":                "tcp://" + ip + ":6379",
		"REDIS_MASTER_PORT_6379_TCP":       "tcp://" + ip + ":6379",
		"REDIS_MASTER_PORT_6379_TCP_PROTO": "tcp",
		"REDIS_MASTER_PORT_6379_TCP_PORT":  "6379",
		"REDIS_MASTER_PORT_6379_TCP_ADDR":  ip,
		"MY_POD_NAME":                      "web",
		"MY_POD_IP":                        p.Status.PodIP,
		"MY_NODE":                          n.name,
		"GREETING":                         "hello-web",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q", k, env[k], v)
		}
	}

	// The hostPort is published by the infra container.
	if _, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/healthz", hostPort)); err != nil {
		t.Errorf("hostPort %d: %v", hostPort, err)
	}

	// A service created after the pod started is not in its environment.
	n.create(strings.ReplaceAll(redisService, "redis-master", "late-svc"))
	body, _ = httpGet("http://" + p.Status.PodIP + ":8080/env")
	if strings.Contains(body, "LATE_SVC_SERVICE_HOST") {
		t.Errorf("a service created after the pod is in its environment")
	}
}

const exitPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: %s
  containers:
  - name: main
    image: kubeactor/busybox:latest
    command: ["sh", "-c", "echo started; exit %d"]
`

// TestDockerRestartPolicies runs a container that exits, under each policy.
func TestDockerRestartPolicies(t *testing.T) {
	n := startDockerNode(t)
	tests := []struct {
		name   string
		policy corev1.RestartPolicy
		code   int
		check  func(*corev1.Pod) error
	}{
		{"always-fails", corev1.RestartPolicyAlways, 1, restartedAtLeast(1)},
		{"always-succeeds", corev1.RestartPolicyAlways, 0, restartedAtLeast(1)},
		{"onfailure-fails", corev1.RestartPolicyOnFailure, 3, restartedAtLeast(1)},
		{"onfailure-succeeds", corev1.RestartPolicyOnFailure, 0, finished(corev1.PodSucceeded, 0, "Completed")},
		{"never-fails", corev1.RestartPolicyNever, 3, finished(corev1.PodFailed, 3, "Error")},
		{"never-succeeds", corev1.RestartPolicyNever, 0, finished(corev1.PodSucceeded, 0, "Completed")},
	}
	for _, tt := range tests {
		n.create(fmt.Sprintf(exitPod, tt.name, tt.policy, tt.code))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n.waitPod(tt.name, 90*time.Second, "expected state", tt.check)
		})
	}
	// A container that keeps failing is held back: CrashLoopBackOff, with events.
	n.waitPod("always-fails", 90*time.Second, "CrashLoopBackOff", func(p *corev1.Pod) error {
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff" {
				return nil
			}
		}
		return fmt.Errorf("not in CrashLoopBackOff")
	})
	Eventually(t, 30*time.Second, "BackOff event", func() error {
		if ev := n.events("always-fails"); !strings.Contains(ev, "BackOff") {
			return fmt.Errorf("events:\n%s", ev)
		}
		return nil
	})
	out := n.s.MustKubectl(t, "", "get", "pod", "always-fails")
	if !strings.Contains(out, "RESTARTS") {
		t.Errorf("kubectl get pod:\n%s", out)
	}
}

func restartedAtLeast(k int32) func(*corev1.Pod) error {
	return func(p *corev1.Pod) error {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount >= k && c.LastTerminationState.Terminated != nil {
				return nil
			}
		}
		return fmt.Errorf("not restarted %d times", k)
	}
}

func finished(phase corev1.PodPhase, code int32, reason string) func(*corev1.Pod) error {
	return func(p *corev1.Pod) error {
		if p.Status.Phase != phase {
			return fmt.Errorf("phase %s, want %s", p.Status.Phase, phase)
		}
		for _, c := range p.Status.ContainerStatuses {
			term := c.State.Terminated
			if term == nil || term.ExitCode != code || term.Reason != reason || c.RestartCount != 0 {
				return fmt.Errorf("container %s: %+v", c.Name, c.State)
			}
		}
		return nil
	}
}

const probedPod = `apiVersion: v1
kind: Pod
metadata:
  name: probed
  labels: {app: probed}
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
    livenessProbe:
      httpGet: {path: /healthz, port: 8080}
      periodSeconds: 1
      failureThreshold: 2
    readinessProbe:
      exec: {command: ["/testserver", "-probe", "http://127.0.0.1:8080/ready"]}
      periodSeconds: 1
`

const probedService = `apiVersion: v1
kind: Service
metadata:
  name: probed
spec:
  selector: {app: probed}
  ports:
  - port: 80
    targetPort: 8080
`

// TestDockerProbes: a failing readiness probe takes the pod out of its service's
// endpoints; a failing liveness probe restarts the container.
func TestDockerProbes(t *testing.T) {
	n := startDockerNode(t)
	n.create(probedService)
	n.create(probedPod)
	p := n.waitPod("probed", 60*time.Second, "Ready", ready)
	base := "http://" + p.Status.PodIP + ":8080"
	endpoints := func() (ready, notReady int, err error) {
		ep, err := n.cs.CoreV1().Endpoints("default").Get(context.Background(), "probed", metav1.GetOptions{})
		if err != nil {
			return 0, 0, err
		}
		for _, s := range ep.Subsets {
			ready += len(s.Addresses)
			notReady += len(s.NotReadyAddresses)
		}
		return ready, notReady, nil
	}
	Eventually(t, 30*time.Second, "endpoint ready", func() error {
		if r, _, err := endpoints(); err != nil || r != 1 {
			return fmt.Errorf("ready addresses %d, %v", r, err)
		}
		return nil
	})

	if _, err := httpGet(base + "/unready"); err != nil {
		t.Fatal(err)
	}
	n.waitPod("probed", 30*time.Second, "not Ready", func(p *corev1.Pod) error {
		if ready(p) == nil {
			return fmt.Errorf("still Ready")
		}
		return running(p)
	})
	Eventually(t, 30*time.Second, "endpoint not ready", func() error {
		if r, nr, err := endpoints(); err != nil || r != 0 || nr != 1 {
			return fmt.Errorf("ready %d, not ready %d, %v", r, nr, err)
		}
		return nil
	})
	if _, err := httpGet(base + "/make-ready"); err != nil {
		t.Fatal(err)
	}
	n.waitPod("probed", 30*time.Second, "Ready again", ready)

	if _, err := httpGet(base + "/fail-health"); err != nil {
		t.Fatal(err)
	}
	n.waitPod("probed", 60*time.Second, "restarted by its liveness probe", restartedAtLeast(1))
	Eventually(t, 30*time.Second, "Unhealthy event", func() error {
		if ev := n.events("probed"); !strings.Contains(ev, "Unhealthy") || !strings.Contains(ev, "Killing") {
			return fmt.Errorf("events:\n%s", ev)
		}
		return nil
	})
	n.waitPod("probed", 60*time.Second, "Ready after the restart", ready)

	// tcpSocket probes: a port that listens makes the pod Ready, one that does not
	// keeps it out, with Unhealthy events.
	n.create(tcpProbedPods)
	n.waitPod("tcp-good", 60*time.Second, "Ready", ready)
	n.waitPod("tcp-bad", 60*time.Second, "Running", running)
	Eventually(t, 30*time.Second, "tcp-bad unhealthy", func() error {
		if ev := n.events("tcp-bad"); !strings.Contains(ev, "Readiness probe failed") {
			return fmt.Errorf("events:\n%s", ev)
		}
		if p, err := n.pod("tcp-bad"); err != nil || ready(p) == nil {
			return fmt.Errorf("tcp-bad is Ready (%v)", err)
		}
		return nil
	})
}

const tcpProbedPods = `apiVersion: v1
kind: Pod
metadata:
  name: tcp-good
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
    livenessProbe:
      tcpSocket: {port: 8080}
      periodSeconds: 1
    readinessProbe:
      tcpSocket: {port: 8080}
      periodSeconds: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: tcp-bad
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
    readinessProbe:
      tcpSocket: {port: 9999}
      periodSeconds: 1
`

const volumePod = `apiVersion: v1
kind: Pod
metadata:
  name: vols
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
    - {name: host, mountPath: /host, readOnly: true}
    - {name: creds, mountPath: /etc/creds, readOnly: true}
  volumes:
  - name: scratch
    emptyDir: {}
  - name: host
    hostPath: {path: %s}
  - name: creds
    secret: {secretName: creds}
`

const credsSecret = `apiVersion: v1
kind: Secret
metadata:
  name: creds
type: Opaque
data:
  password: czNjcjN0
  username: YWRtaW4=
`

// TestDockerVolumes mounts emptyDir, hostPath and secret volumes. The secret is
// created only after the pod: until then the pod waits, with an event.
func TestDockerVolumes(t *testing.T) {
	n := startDockerNode(t)
	hostDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostDir, "hello"), []byte("from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	n.create(fmt.Sprintf(volumePod, hostDir))
	Eventually(t, 60*time.Second, "FailedMount event for the missing secret", func() error {
		if ev := n.events("vols"); !strings.Contains(ev, "FailedMount") || !strings.Contains(ev, `secret "creds" not found`) {
			return fmt.Errorf("events:\n%s", ev)
		}
		return nil
	})
	if p, err := n.pod("vols"); err != nil || p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod without its secret: %v %v", p.Status.Phase, err)
	}
	n.create(credsSecret)
	p := n.waitPod("vols", 60*time.Second, "Running once the secret exists", running)
	base := "http://" + p.Status.PodIP + ":8080"
	Eventually(t, 10*time.Second, "server up", func() error { _, err := httpGet(base + "/healthz"); return err })

	for path, want := range map[string]string{"/etc/creds/password": "s3cr3t", "/etc/creds/username": "admin", "/host/hello": "from the host"} {
		if got, err := httpGet(base + "/file?path=" + path); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := httpGet(base + "/write?path=/scratch/x&data=kept"); err != nil {
		t.Fatal(err)
	}
	if got, err := httpGet(base + "/file?path=/scratch/x"); err != nil || got != "kept" {
		t.Errorf("emptyDir round trip = %q, %v", got, err)
	}
	podDir := filepath.Join(n.root, "pods", string(p.UID))
	if _, err := os.Stat(podDir); err != nil {
		t.Fatalf("pod directory: %v", err)
	}
	n.s.MustKubectl(t, "", "delete", "pod", "vols", "--grace-period=1")
	Eventually(t, 60*time.Second, "volumes removed with the pod", func() error {
		if _, err := os.Stat(podDir); !os.IsNotExist(err) {
			return fmt.Errorf("%s still there (%v)", podDir, err)
		}
		return nil
	})
}

// TestDockerImageAndConfigErrors: a missing image and a crashing container give the
// right status and events, and the agent goes on running other pods.
func TestDockerImageAndConfigErrors(t *testing.T) {
	n := startDockerNode(t)
	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: noimage
spec:
  containers:
  - name: app
    image: kubeactor/does-not-exist:1.0
`)
	n.waitPod("noimage", 60*time.Second, "ErrImagePull", waitingReason("ErrImagePull", "ImagePullBackOff"))
	n.waitPod("noimage", 60*time.Second, "ImagePullBackOff", waitingReason("ImagePullBackOff"))
	Eventually(t, 30*time.Second, "pull events", func() error {
		if ev := n.events("noimage"); !strings.Contains(ev, "Failed to pull image") || !strings.Contains(ev, "ErrImagePull") {
			return fmt.Errorf("events:\n%s", ev)
		}
		return nil
	})
	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: badref
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
    env:
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: absent, key: password}}
`)
	n.waitPod("badref", 60*time.Second, "CreateContainerConfigError", waitingReason("CreateContainerConfigError"))
	// The node still runs a good pod.
	n.create(fmt.Sprintf(exitPod, "fine", "Never", 0))
	n.waitPod("fine", 60*time.Second, "Succeeded", finished(corev1.PodSucceeded, 0, "Completed"))
}

func waitingReason(reasons ...string) func(*corev1.Pod) error {
	return func(p *corev1.Pod) error {
		for _, c := range p.Status.ContainerStatuses {
			for _, r := range reasons {
				if c.State.Waiting != nil && c.State.Waiting.Reason == r {
					return nil
				}
			}
		}
		return fmt.Errorf("no container waiting with %v", reasons)
	}
}

// TestDockerOOMKilled: a container over its memory limit is killed and reported so.
func TestDockerOOMKilled(t *testing.T) {
	n := startDockerNode(t)
	n.create(`apiVersion: v1
kind: Pod
metadata:
  name: hog
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
    resources:
      limits: {memory: 48Mi, cpu: 500m}
`)
	p := n.waitPod("hog", 60*time.Second, "Running", running)
	// The limits became the engine's: 48 MiB, and 50ms of CPU per 100ms period.
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "docker://")
	out, err := exec.Command("docker", "inspect", "-f", "{{.HostConfig.Memory}} {{.HostConfig.CpuQuota}} {{.HostConfig.CpuPeriod}}", id).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "50331648 50000 100000" {
		t.Errorf("docker limits %q (%v), want 50331648 50000 100000", out, err)
	}
	Eventually(t, 10*time.Second, "server up", func() error { _, err := httpGet("http://" + p.Status.PodIP + ":8080/healthz"); return err })
	_, _ = httpGet("http://" + p.Status.PodIP + ":8080/alloc?mb=256") // the connection dies with the process
	n.waitPod("hog", 60*time.Second, "OOMKilled", func(p *corev1.Pod) error {
		for _, c := range p.Status.ContainerStatuses {
			for _, st := range []corev1.ContainerState{c.State, c.LastTerminationState} {
				if st.Terminated != nil && st.Terminated.Reason == "OOMKilled" {
					return nil
				}
			}
		}
		return fmt.Errorf("not OOMKilled")
	})
}

const gracePod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: kubeactor/testserver:latest
    env:
    - {name: IGNORE_SIGTERM, value: "%s"}
`

// TestDockerGracefulDeletion: deleting a pod sends SIGTERM, then SIGKILL after the
// grace period, and removes its containers; the exit codes the engine reports tell
// which signal ended each container.
func TestDockerGracefulDeletion(t *testing.T) {
	n := startDockerNode(t)
	for _, name := range []string{"polite", "stubborn"} {
		ignore := map[string]string{"polite": "0", "stubborn": "1"}[name]
		n.create(fmt.Sprintf(gracePod, name, ignore))
	}
	exits := map[string]*Background{}
	for _, name := range []string{"polite", "stubborn"} {
		p := n.waitPod(name, 60*time.Second, "Running", running)
		id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "docker://")
		exits[name] = startCommand(t, "docker", "events", "--filter", "container="+id, "--filter", "event=die", "--format", "exit={{.Actor.Attributes.exitCode}}")
	}
	// docker events needs a moment to subscribe; the pod's container must still run then.
	Eventually(t, 10*time.Second, "event streams attached", func() error {
		for _, b := range exits {
			if b.Output() != "" {
				return fmt.Errorf("unexpected output %q", b.Output())
			}
		}
		return nil
	})
	n.s.MustKubectl(t, "", "delete", "pod", "polite", "stubborn", "--wait=false")
	for name, code := range map[string]string{"polite": "exit=0", "stubborn": "exit=137"} {
		Eventually(t, 60*time.Second, name+" pod gone", func() error {
			if _, err := n.pod(name); !isNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		Eventually(t, 10*time.Second, name+" exit code", func() error {
			if !strings.Contains(exits[name].Output(), code) {
				return fmt.Errorf("docker events: %q, want %s", exits[name].Output(), code)
			}
			return nil
		})
	}
	Eventually(t, 30*time.Second, "containers removed", func() error {
		if names := n.dockerPS(true); len(names) > 0 {
			return fmt.Errorf("left: %v", names)
		}
		return nil
	})
}

// startCommand runs a command in the background until the test ends.
func startCommand(t *testing.T, name string, args ...string) *Background {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	b := &Background{}
	cmd.Stdout, cmd.Stderr = b, b
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	return b
}

// TestDockerAgentRestart: a killed and restarted agent keeps the running containers
// (no restart), converges the status, re-creates a container whose spec changed,
// and removes the containers of a pod deleted while it was away.
func TestDockerAgentRestart(t *testing.T) {
	n := startDockerNode(t)
	for _, name := range []string{"keep", "doomed"} {
		n.create(fmt.Sprintf(gracePod, name, "0"))
	}
	keep := n.waitPod("keep", 60*time.Second, "Running", running)
	n.waitPod("doomed", 60*time.Second, "Running", running)
	before := keep.Status.ContainerStatuses[0].ContainerID

	n.agent.Kill()
	zero := int64(0)
	if err := n.cs.CoreV1().Pods("default").Delete(context.Background(), "doomed", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	n.agent = startAgent(t, n.s, n.args...)

	Eventually(t, 60*time.Second, "containers of the deleted pod removed", func() error {
		for _, name := range n.dockerPS(true) {
			if strings.Contains(name, "_doomed_") {
				return fmt.Errorf("still there: %s", name)
			}
		}
		return nil
	})
	p := n.waitPod("keep", 30*time.Second, "Running", running)
	if got := p.Status.ContainerStatuses[0]; got.ContainerID != before || got.RestartCount != 0 {
		t.Errorf("after the agent restart: container %s (restarts %d), want %s kept", got.ContainerID, got.RestartCount, before)
	}

	// A changed spec (the image) means a new container.
	if out, err := exec.Command("docker", "tag", imageTestServer, "kubeactor/testserver:e2e-v2").CombinedOutput(); err != nil {
		t.Fatalf("docker tag: %v\n%s", err, out)
	}
	n.s.MustKubectl(t, "", "patch", "pod", "keep", "-p", `{"spec":{"containers":[{"name":"app","image":"kubeactor/testserver:e2e-v2"}]}}`)
	n.waitPod("keep", 60*time.Second, "re-created with the new image", func(p *corev1.Pod) error {
		c := p.Status.ContainerStatuses[0]
		if c.ContainerID == before || c.Image != "kubeactor/testserver:e2e-v2" || c.State.Running == nil {
			return fmt.Errorf("container %s image %s", c.ContainerID, c.Image)
		}
		return nil
	})
}

// TestDockerStaticPod runs a pod from the book's kubelet --config (a directory of
// manifests; --pod-manifest-path is its newer name) and mirrors it.
func TestDockerStaticPod(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "static.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: static-web
spec:
  containers:
  - name: app
    image: kubeactor/testserver:latest
`)
	n := startDockerNode(t, "--config="+dir, "--file-check-frequency", "1s")
	name := "static-web-" + n.name
	p := n.waitPod(name, 60*time.Second, "mirror pod Running", running)
	if _, ok := p.Annotations["kubernetes.io/config.mirror"]; !ok {
		t.Errorf("mirror pod annotations %v", p.Annotations)
	}
	// Deleting the mirror pod does not stop the static pod; the mirror comes back.
	id := p.Status.ContainerStatuses[0].ContainerID
	n.s.MustKubectl(t, "", "delete", "pod", name, "--wait=false")
	n.waitPod(name, 60*time.Second, "mirror pod back", func(q *corev1.Pod) error {
		if q.UID == p.UID {
			return fmt.Errorf("same mirror")
		}
		if err := running(q); err != nil {
			return err
		}
		if q.Status.ContainerStatuses[0].ContainerID != id {
			return fmt.Errorf("container changed: %s", q.Status.ContainerStatuses[0].ContainerID)
		}
		return nil
	})
	// Removing the manifest stops the pod and removes its mirror.
	if err := os.Remove(filepath.Join(dir, "static.yaml")); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "static pod gone", func() error {
		if _, err := n.pod(name); !isNotFound(err) {
			return fmt.Errorf("mirror still there: %v", err)
		}
		if names := n.dockerPS(false); len(names) > 0 {
			return fmt.Errorf("containers still running: %v", names)
		}
		return nil
	})
}

// TestDockerGarbageCollection keeps at most one dead instance of a crashing container.
func TestDockerGarbageCollection(t *testing.T) {
	n := startDockerNode(t, "--maximum-dead-containers-per-container", "1", "--gc-period", "1s", "--minimum-container-ttl-duration", "1s")
	n.create(fmt.Sprintf(exitPod, "crasher", "Always", 1))
	n.waitPod("crasher", 120*time.Second, "restarted twice", restartedAtLeast(2))
	Eventually(t, 30*time.Second, "dead instances collected", func() error {
		var app int
		for _, name := range n.dockerPS(true) {
			if strings.HasPrefix(name, "k8s_main.") {
				app++
			}
		}
		// the latest instance (its status needs it) and one dead one
		if app > 2 {
			return fmt.Errorf("%d instances of the container remain", app)
		}
		return nil
	})
	out := n.s.MustKubectl(t, "", "get", "pod", "crasher", "-o", "jsonpath={.status.containerStatuses[0].restartCount}")
	if c, err := strconv.Atoi(out); err != nil || c < 2 {
		t.Errorf("restartCount %q", out)
	}
}
