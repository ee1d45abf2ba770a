package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestDockerVolumeTypes: the volume types the agent serves beyond emptyDir, hostPath
// and secret, on the real engine: downwardAPI files, a gitRepo cloned at a named
// revision (not the head) from a repository the test makes (and one that appears
// only after the pod: the clone is retried), and the book's types the node does not serve (rbd, iscsi, glusterfs,
// gcePersistentDisk, awsElasticBlockStore), each of which keeps its pod Pending
// with one clear event naming the type.
func TestDockerVolumeTypes(t *testing.T) {
	n := startDockerNode(t)

	t.Run("downwardAPI", func(t *testing.T) {
		n.create(`apiVersion: v1
kind: Pod
metadata:
  name: podinfo
  labels:
    zone: us-est-coast
    cluster: test-cluster1
  annotations:
    builder: john-doe
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: client
    image: kubeactor/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 3600"]
    volumeMounts:
    - name: podinfo
      mountPath: /etc/podinfo
      readOnly: true
  volumes:
  - name: podinfo
    downwardAPI:
      items:
      - path: labels
        fieldRef:
          fieldPath: metadata.labels
      - path: annotations
        fieldRef:
          fieldPath: metadata.annotations
      - path: name
        fieldRef:
          fieldPath: metadata.name
      - path: ns/namespace
        fieldRef:
          fieldPath: metadata.namespace
`)
		n.waitPod("podinfo", 60*time.Second, "Running", running)
		for file, want := range map[string]string{
			"labels":       "cluster=\"test-cluster1\"\nzone=\"us-est-coast\"",
			"annotations":  `builder="john-doe"`, // first of the lines (the scheduler adds its own)
			"name":         "podinfo",
			"ns/namespace": "default",
		} {
			got := n.s.MustKubectl(t, "", "exec", "podinfo", "--", "cat", "/etc/podinfo/"+file)
			if file == "annotations" {
				got, _, _ = strings.Cut(got, "\n")
			}
			if got != want {
				t.Errorf("/etc/podinfo/%s = %q, want %q", file, got, want)
			}
		}
	})

	t.Run("gitRepo", func(t *testing.T) {
		repo := gitRepoForTest(t, "<h1>from git</h1>")
		// A second commit after the one the pod asks for: the volume holds the
		// revision named, not the branch's head.
		git := func(args ...string) string {
			t.Helper()
			cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com"}, args...)...)
			cmd.Dir = repo
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		revision := git("rev-parse", "HEAD")
		if err := os.WriteFile(filepath.Join(repo, "index.html"), []byte("<h1>head</h1>"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("commit", "-qam", "head")
		// A repository that does not exist yet: the pod waits, then runs once it does.
		later := filepath.Join(t.TempDir(), "later")
		n.create(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: gitsite
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: web
    image: kubeactor/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 3600"]
    volumeMounts:
    - name: site
      mountPath: /site
    - name: late
      mountPath: /late
  volumes:
  - name: site
    gitRepo:
      repository: file://%s
      revision: %s
      directory: .
  - name: late
    gitRepo:
      repository: file://%s
      directory: src
`, repo, revision, later))
		Eventually(t, 30*time.Second, "an event for the failed clone", func() error {
			if ev := n.events("gitsite"); !strings.Contains(ev, "FailedMount") || !strings.Contains(ev, "git clone") {
				return fmt.Errorf("events:\n%s", ev)
			}
			return nil
		})
		if p, err := n.pod("gitsite"); err != nil || p.Status.Phase != corev1.PodPending {
			t.Fatalf("pod with a failed clone: %v %+v", err, p.Status)
		}
		if err := os.Rename(gitRepoForTest(t, "late"), later); err != nil {
			t.Fatal(err)
		}
		n.waitPod("gitsite", 60*time.Second, "Running once the repository exists", running)
		if got := n.s.MustKubectl(t, "", "exec", "gitsite", "--", "cat", "/site/index.html"); got != "<h1>from git</h1>" {
			t.Errorf("/site/index.html = %q", got)
		}
		if got := n.s.MustKubectl(t, "", "exec", "gitsite", "--", "cat", "/late/src/index.html"); got != "late" {
			t.Errorf("/late/src/index.html = %q", got)
		}
	})

	t.Run("unsupported types", func(t *testing.T) {
		// The book's volume types this node does not serve, one pod each.
		sources := map[string]string{
			"rbd":                  "rbd: {monitors: [\"10.16.154.78:6789\"], image: foo, pool: kube, user: admin, fsType: ext4}",
			"iscsi":                "iscsi: {targetPortal: \"10.0.2.15:3260\", iqn: \"iqn.2001-04.com.example:storage.kube.sys1.xyz\", lun: 0, fsType: ext4}",
			"glusterfs":            "glusterfs: {endpoints: glusterfs-cluster, path: kube_vol}",
			"gcePersistentDisk":    "gcePersistentDisk: {pdName: my-data-disk, fsType: ext4}",
			"awsElasticBlockStore": "awsElasticBlockStore: {volumeID: \"aws://us-east-1a/vol-0123\", fsType: ext4}",
		}
		pods := map[string]string{} // pod name -> the event it must get
		for kind, src := range sources {
			name := "vol-" + strings.ToLower(kind)
			pods[name] = "FailedMount: volume data: type " + kind + " is not supported on this node"
			n.create(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: app
    image: kubeactor/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 3600"]
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    %s
`, name, src))
		}
		for name, msg := range pods {
			Eventually(t, 30*time.Second, "the unsupported-volume event of "+name, func() error {
				if ev := n.events(name); !strings.Contains(ev, msg) {
					return fmt.Errorf("events:\n%s", ev)
				}
				return nil
			})
		}
		// They stay so: every look over three sync periods (--sync-frequency 2s)
		// finds them Pending, with no container made.
		since := time.Now()
		Eventually(t, 30*time.Second, "three sync periods of Pending", func() error {
			for name := range pods {
				p, err := n.pod(name)
				if err != nil {
					return err
				}
				if p.Status.Phase != corev1.PodPending {
					t.Fatalf("%s: phase %s, want Pending", name, p.Status.Phase)
				}
			}
			for _, c := range n.dockerPS(true) {
				for name := range pods {
					if strings.Contains(c, "_"+name+"_") {
						t.Fatalf("a container was made for the pod %s: %s", name, c)
					}
				}
			}
			if time.Since(since) < 6*time.Second {
				return fmt.Errorf("watching")
			}
			return nil
		})
		for name, msg := range pods {
			if ev := n.events(name); strings.Count(ev, msg) != 1 {
				t.Errorf("%s: want the event once:\n%s", name, ev)
			}
		}
	})
}

// gitRepoForTest makes a git repository with one commit of index.html and returns
// its path.
func gitRepoForTest(t testing.TB, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-qm", "site"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}
