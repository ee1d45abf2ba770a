package kubelet

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWriteDownwardAPI: the files are written, and rewritten in place.
func TestWriteDownwardAPI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "1"}}}
	src := &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "meta/name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
	}}
	for _, want := range []string{`a="1"`, `a="2"`} {
		pod.Labels["a"] = strings.Trim(strings.TrimPrefix(want, "a="), `"`)
		if err := writeDownwardAPI(pod, src, dir); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "labels")); err != nil || string(b) != want {
			t.Errorf("labels %q %v, want %q", b, err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "meta", "name")); err != nil || string(b) != "p" {
		t.Errorf("name %q %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("entries %v: temporary files left", entries)
	}
}

// TestCloneGitRepo clones a repository made here, at a revision, into place; a
// second call keeps it; a bad repository leaves nothing behind.
func TestCloneGitRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on this machine")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "index.html"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "one")
	first := git("rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(repo, "index.html"), []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-qam", "two")

	base := t.TempDir()
	tests := []struct {
		name, dir, revision, file, want string
	}{
		{"head, into the volume", ".", "", "index.html", "v2"},
		{"revision, in a subdirectory", "site", first, "site/index.html", "v1"},
		{"default directory: the repository's name", "", "", filepath.Base(repo) + "/index.html", "v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(base, strings.ReplaceAll(tt.name, " ", "_"))
			src := &corev1.GitRepoVolumeSource{Repository: "file://" + repo, Directory: tt.dir, Revision: tt.revision}
			for range 2 {
				if err := cloneGitRepo(context.Background(), src, path); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(path, tt.file)); err != nil || string(b) != tt.want {
				t.Errorf("%s: %q %v, want %q", tt.file, b, err, tt.want)
			}
		})
	}

	bad := filepath.Join(base, "bad")
	err := cloneGitRepo(context.Background(), &corev1.GitRepoVolumeSource{Repository: "file:///nonexistent/repo"}, bad)
	if err == nil || !strings.Contains(err.Error(), "git clone") {
		t.Fatalf("bad repository: %v", err)
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "bad" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestNFSMountArgs: the export and read-only reach mount.
func TestNFSMountArgs(t *testing.T) {
	tests := []struct {
		name string
		src  corev1.NFSVolumeSource
		want string
	}{
		{"read-write", corev1.NFSVolumeSource{Server: "10.0.0.5", Path: "/exports/data"}, "-t nfs 10.0.0.5:/exports/data /v"},
		{"read-only", corev1.NFSVolumeSource{Server: "nfs.example", Path: "/", ReadOnly: true}, "-t nfs -o ro nfs.example:/ /v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(nfsMountArgs(&tt.src, "/v"), " "); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMountedFollowsSymlinks: a mount point reached through a symbolic link is
// still one (the agent must never remove the files of a mounted export).
func TestMountedFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "proc-link")
	if err := os.Symlink("/proc", link); err != nil {
		t.Fatal(err)
	}
	if !mounted("/proc") || !mounted(link) || mounted(dir) {
		t.Errorf("mounted: /proc %v, link %v, temp dir %v", mounted("/proc"), mounted(link), mounted(dir))
	}
}

// TestUnsupportedVolumeMessage: the event's words.
// TestUnsupportedVolumeMessage: each of the book's volume types this node does not
// serve is refused with a message naming the volume and its type.
func TestUnsupportedVolumeMessage(t *testing.T) {
	tests := []struct {
		kind string
		src  corev1.VolumeSource
	}{
		{"rbd", corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"m"}, RBDImage: "i"}}},
		{"iscsi", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "10.0.2.15:3260", IQN: "iqn.2001-04.com.example:storage.kube.sys1.xyz", Lun: 0, FSType: "ext4"}}},
		{"glusterfs", corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{EndpointsName: "glusterfs-cluster", Path: "kube_vol"}}},
		{"gcePersistentDisk", corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "my-data-disk", FSType: "ext4"}}},
		{"awsElasticBlockStore", corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://us-east-1a/vol-1", FSType: "ext4"}}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			a := &Agent{cfg: Config{RootDir: t.TempDir()}}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: tt.src},
			}}}
			_, err := a.mountVolumes(context.Background(), pod)
			if want := "volume data: type " + tt.kind + " is not supported on this node"; err == nil || err.Error() != want {
				t.Errorf("err %v, want %q", err, want)
			}
			var u unsupportedVolume
			if !errors.As(err, &u) {
				t.Errorf("err %T is not an unsupportedVolume", err)
			}
		})
	}
}

// TestVolumeTypesDocumented: docs/operations.md's Volumes table names every volume
// type of the API, so a new one is given a status there.
func TestVolumeTypesDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Volumes")
	if start < 0 {
		t.Fatal("no Volumes section")
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	rt := reflect.TypeOf(corev1.VolumeSource{})
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("volume type %s is not in the Volumes table", name)
		}
	}
}
