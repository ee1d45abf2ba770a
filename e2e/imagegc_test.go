package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestDockerImageGC runs the agent's image collection on the real engine with
// thresholds so low that it always runs (high 1%, low 0%: every unused image goes),
// a collection every second and images kept 30s after the agent first sees them.
// The engine is shared, so --image-gc-scope limits the collection to the images
// this test tags (every other image is kept as if in use).
//
// Two never-used images go first, while the images of two finished pods (their
// dead containers still use them), of a running pod and the infra image stay; then
// each finished pod's image goes once its pod is deleted, in the order they were
// last used; the running pod's image and the infra image stay throughout.
func TestDockerImageGC(t *testing.T) {
	requireDocker(t)
	prefix := "kubeactor-e2e-gc-" + randHex(4) + "/"
	var tags []string
	t.Cleanup(func() {
		if len(tags) > 0 {
			_ = exec.Command("docker", append([]string{"rmi", "-f"}, tags...)...).Run()
		}
	})
	build := func(name, from string) string {
		tag := prefix + name + ":1"
		dir := t.TempDir()
		df := fmt.Sprintf("FROM %s\nLABEL io.kubeactor.e2e=%q\n", from, tag)
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("docker", "build", "-q", "-t", tag, dir)
		cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("docker build %s: %v\n%s", tag, err, out)
		}
		tags = append(tags, tag)
		return tag
	}
	// importTiny makes an image of one small file: a distinct id per name.
	importTiny := func(name string) string {
		tag := prefix + name + ":1"
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		body := []byte("throwaway " + tag + "\n")
		if err := tw.WriteHeader(&tar.Header{Name: "hello.txt", Mode: 0o644, Size: int64(len(body)), ModTime: time.Now()}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(body)
		_ = tw.Close()
		cmd := exec.Command("docker", "import", "-", tag)
		cmd.Stdin = &buf
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("docker import %s: %v\n%s", tag, err, out)
		}
		tags = append(tags, tag)
		return tag
	}
	keep, first, second := build("keep", imageBusybox), build("first", imageBusybox), build("second", imageBusybox)
	pause := build("pause", imagePause)

	n := startDockerNode(t, append([]string{"--pod-infra-container-image", pause,
		"--image-gc-high-threshold", "1", "--image-gc-low-threshold", "0",
		"--minimum-image-ttl-duration", "30s", "--gc-period", "1s", "--image-gc-scope", prefix}, privatePorts...)...)
	started := time.Now()
	pod := func(name, image, restart, command string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  restartPolicy: %s\n  containers:\n  - name: main\n    image: %s\n    command: [\"sh\", \"-c\", %q]\n",
			name, restart, image, command)
	}
	n.create(pod("keep", keep, "Always", "while true; do sleep 1; done"))
	n.create(pod("first", first, "Never", "echo first"))
	n.waitPod("first", 25*time.Second, "Succeeded", finished(corev1.PodSucceeded, 0, "Completed"))
	n.create(pod("second", second, "Never", "echo second"))
	n.waitPod("second", 25*time.Second, "Succeeded", finished(corev1.PodSucceeded, 0, "Completed"))
	n.waitPod("keep", 25*time.Second, "Running", running)
	if d := time.Since(started); d > 30*time.Second {
		t.Fatalf("the pods took %s to start, past --minimum-image-ttl-duration: this test needs a quicker machine", d)
	}

	present := func(tag string) bool {
		return exec.Command("docker", "image", "inspect", tag).Run() == nil
	}
	waitGone := func(what string, gone []string, stay []string) {
		t.Helper()
		Eventually(t, 90*time.Second, what, func() error {
			for _, tag := range gone {
				if present(tag) {
					return fmt.Errorf("%s still present", tag)
				}
			}
			return nil
		})
		for _, tag := range stay {
			if !present(tag) {
				t.Fatalf("%s: %s was removed too", what, tag)
			}
		}
	}

	// Never-used images go; the images in use stay.
	idle := []string{importTiny("idle-a"), importTiny("idle-b")}
	waitGone("the unused images removed", idle, []string{first, second, keep, pause})
	// A finished pod's image goes once its dead container does.
	n.s.MustKubectl(t, "", "delete", "pod", "first", "--grace-period=0", "--force")
	waitGone("first's image removed", []string{first}, []string{second, keep, pause})
	n.s.MustKubectl(t, "", "delete", "pod", "second", "--grace-period=0", "--force")
	waitGone("second's image removed", []string{second}, []string{keep, pause})

	// The agent removed them least recently used first, and nothing else.
	var removed []string
	sc := bufio.NewScanner(strings.NewReader(n.agent.Logs()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Tags string `json:"tags"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "image collection: removed an unused image" {
			removed = append(removed, line.Tags)
		}
	}
	if len(removed) != 4 || !sameSet(removed[:2], idle) || removed[2] != first || removed[3] != second {
		t.Errorf("removed in this order: %q; want %q (either order), then %q, %q", removed, idle, first, second)
	}
}

// sameSet tells whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, v := range seen {
		if v != 0 {
			return false
		}
	}
	return true
}
