package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/nodeagent/podsync"
)

var getOpts = metav1.GetOptions{}

// podDir is where a pod's volumes live on the host.
func (a *Agent) podDir(uid types.UID) string {
	return filepath.Join(a.cfg.RootDir, "pods", string(uid))
}

// mountVolumes prepares every volume of pod and returns the host path of each, by
// volume name. It is idempotent: a restarted agent finds its volumes in place. A
// secret that does not exist (yet) or a failed clone is an error; the sync retries.
// A volume type this node does not serve is an unsupportedVolume error.
func (a *Agent) mountVolumes(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	out := make(map[string]string, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		path, err := a.mountVolume(ctx, pod, v)
		if err != nil {
			return nil, err
		}
		out[v.Name] = path
	}
	return out, nil
}

// Where the volumes of each type live under the pod's directory.
const (
	dirEmptyDir    = "kubernetes.io~empty-dir"
	dirSecret      = "kubernetes.io~secret"
	dirDownwardAPI = "kubernetes.io~downward-api"
	dirGitRepo     = "kubernetes.io~git-repo"
	dirNFS         = "kubernetes.io~nfs"
)

// mountVolume prepares one volume and returns its host path. Each volume type this
// node serves is one case.
func (a *Agent) mountVolume(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (string, error) {
	dir := func(kind string) string { return filepath.Join(a.podDir(pod.UID), "volumes", kind, v.Name) }
	switch kind := podsync.VolumeType(v); kind {
	case "emptyDir":
		path := dir(dirEmptyDir)
		err := os.MkdirAll(path, 0o777)
		if err == nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
			err = mountTmpfs(path)
		}
		if err == nil {
			err = os.Chmod(path, 0o777) // any user of the container may write
		}
		return path, err
	case "hostPath":
		return v.HostPath.Path, prepareHostPath(v.HostPath)
	case "secret":
		path := dir(dirSecret)
		return path, a.mountSecret(ctx, pod, v.Secret, path)
	case "downwardAPI":
		path := dir(dirDownwardAPI)
		return path, writeDownwardAPI(pod, v.DownwardAPI, path)
	case "gitRepo":
		path := dir(dirGitRepo)
		return path, cloneGitRepo(ctx, v.GitRepo, path)
	case "persistentVolumeClaim":
		return a.claimPath(ctx, pod, v.PersistentVolumeClaim) // claims.go
	case "nfs":
		path := dir(dirNFS)
		return path, mountNFS(ctx, v.NFS, path)
	default:
		return "", unsupportedVolume{name: v.Name, kind: kind}
	}
}

// unsupportedVolume says that this node does not serve a volume's type (iscsi,
// rbd, cephfs, ...): the pod stays Pending with one FailedMount event saying so.
type unsupportedVolume struct{ name, kind string }

func (e unsupportedVolume) Error() string {
	if e.kind == "" {
		return fmt.Sprintf("volume %s: no volume type is set", e.name)
	}
	return fmt.Sprintf("volume %s: type %s is not supported on this node", e.name, e.kind)
}

// nfsTimeout bounds one mount of an nfs volume (mount.nfs retries an unanswering
// server for minutes).
const nfsTimeout = time.Minute

// mountNFS mounts the export server:path at path with the machine's NFS client
// (mount -t nfs; read-only when the volume says so) unless it is mounted already.
// A failed mount carries mount's own words; the sync retries.
func mountNFS(ctx context.Context, src *corev1.NFSVolumeSource, path string) error {
	if mounted(path) {
		return nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, nfsTimeout)
	defer cancel()
	args := nfsMountArgs(src, path)
	out, err := exec.CommandContext(ctx, "mount", args...).CombinedOutput()
	if err != nil {
		_ = os.Remove(path) // an empty directory left by a failed mount
		return fmt.Errorf("nfs %s:%s: mount %s: %v: %s", src.Server, src.Path, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// nfsMountArgs are mount's arguments for an nfs volume at path.
func nfsMountArgs(src *corev1.NFSVolumeSource, path string) []string {
	args := []string{"-t", "nfs"}
	if src.ReadOnly {
		args = append(args, "-o", "ro")
	}
	return append(args, src.Server+":"+src.Path, path)
}

// writeDownwardAPI writes the files of a downwardAPI volume into path, each
// replaced atomically.
func writeDownwardAPI(pod *corev1.Pod, src *corev1.DownwardAPIVolumeSource, path string) error {
	files, err := podsync.DownwardAPIFiles(pod, src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(path, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(f.Data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), os.FileMode(f.Mode))); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), p); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
	}
	return nil
}

// gitTimeout bounds one git command of a gitRepo volume.
const gitTimeout = 5 * time.Minute

// cloneGitRepo makes a gitRepo volume at path with the machine's git: cloned (and
// checked out at the revision) in a directory beside it, renamed into place once
// complete, so a failed clone leaves nothing and a present path is a finished one.
func cloneGitRepo(ctx context.Context, src *corev1.GitRepoVolumeSource, path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	plan, err := podsync.GitRepoClone(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), "."+filepath.Base(path)+".clone-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone once renamed
	if err := runGit(ctx, tmp, plan.Clone); err != nil {
		return err
	}
	repo := filepath.Join(tmp, plan.Subdir)
	if plan.Subdir == "" { // git named the directory after the repository
		entries, err := os.ReadDir(tmp)
		if err != nil || len(entries) != 1 {
			return fmt.Errorf("gitRepo %s: the clone made %d entries, want one directory", src.Repository, len(entries))
		}
		repo = filepath.Join(tmp, entries[0].Name())
	}
	if plan.Checkout != nil {
		if err := runGit(ctx, repo, plan.Checkout); err != nil {
			return err
		}
		if err := runGit(ctx, repo, plan.Reset); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// runGit runs git with args in dir; a failure carries git's own words.
func runGit(ctx context.Context, dir string, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 400 {
			msg = msg[:400] + "..."
		}
		return fmt.Errorf("git %s: %v: %s", args[0], err, msg)
	}
	return nil
}

// prepareHostPath checks or creates a hostPath volume as its type asks.
func prepareHostPath(h *corev1.HostPathVolumeSource) error {
	t := corev1.HostPathUnset
	if h.Type != nil {
		t = *h.Type
	}
	fi, err := os.Stat(h.Path)
	switch t {
	case corev1.HostPathDirectoryOrCreate:
		if errors.Is(err, os.ErrNotExist) {
			return os.MkdirAll(h.Path, 0o755)
		}
	case corev1.HostPathFileOrCreate:
		if errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(filepath.Dir(h.Path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(h.Path, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
	case corev1.HostPathDirectory:
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("hostPath %s is not a directory", h.Path)
		}
	case corev1.HostPathFile:
		if err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("hostPath %s is not a file", h.Path)
		}
	}
	return nil
}

// mountSecret mounts a tmpfs at path and writes one file per key of the secret
// (or per listed item). An existing mount is kept: a secret volume is not updated
// once its pod runs.
func (a *Agent) mountSecret(ctx context.Context, pod *corev1.Pod, src *corev1.SecretVolumeSource, path string) error {
	if mounted(path) {
		return nil
	}
	secret, err := a.cs.CoreV1().Secrets(pod.Namespace).Get(ctx, src.SecretName, getOpts)
	if apierrors.IsNotFound(err) {
		if src.Optional != nil && *src.Optional {
			return os.MkdirAll(path, 0o755)
		}
		return fmt.Errorf("secret %q not found", src.SecretName)
	}
	if err != nil {
		return fmt.Errorf("get secret %q: %w", src.SecretName, err)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	if err := mountTmpfs(path); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if src.DefaultMode != nil {
		mode = os.FileMode(*src.DefaultMode)
	}
	files := map[string][]byte{}
	if len(src.Items) == 0 {
		for k, v := range secret.Data {
			files[k] = v
		}
	}
	for _, it := range src.Items {
		v, ok := secret.Data[it.Key]
		if !ok {
			return fmt.Errorf("secret %q has no key %q", src.SecretName, it.Key)
		}
		files[it.Path] = v
	}
	for name, data := range files {
		p := filepath.Join(path, name)
		if !strings.HasPrefix(p, path+string(filepath.Separator)) {
			return fmt.Errorf("secret %q: path %q leaves the volume", src.SecretName, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			return err
		}
	}
	return nil
}

// unmountVolumes unmounts the pod's tmpfs and nfs volumes and removes its
// directory (never the files of an export: a volume still mounted stops it).
func (a *Agent) unmountVolumes(uid types.UID) error {
	dir := a.podDir(uid)
	for _, kind := range []string{dirSecret, dirEmptyDir, dirNFS} {
		entries, _ := os.ReadDir(filepath.Join(dir, "volumes", kind))
		for _, e := range entries {
			p := filepath.Join(dir, "volumes", kind, e.Name())
			if mounted(p) {
				if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
					return fmt.Errorf("unmount %s: %w", p, err)
				}
			}
		}
	}
	return os.RemoveAll(dir)
}

// mountTmpfs mounts a memory-backed filesystem at path unless one is there.
func mountTmpfs(path string) error {
	if mounted(path) {
		return nil
	}
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", path, err)
	}
	return nil
}

// mounted tells whether path, or the path its symbolic links resolve to, is a
// mount point (from /proc/self/mountinfo).
func mounted(path string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		resolved = path
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (unescapeMount(f[4]) == path || unescapeMount(f[4]) == resolved) {
			return true
		}
	}
	return false
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
