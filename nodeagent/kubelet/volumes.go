package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var getOpts = metav1.GetOptions{}

// podDir is where a pod's volumes live on the host.
func (a *Agent) podDir(uid types.UID) string {
	return filepath.Join(a.cfg.RootDir, "pods", string(uid))
}

// mountVolumes prepares every volume of pod and returns the host path of each, by
// volume name. It is idempotent: a restarted agent finds its volumes in place. A
// secret that does not exist (yet) is an error; the sync retries.
func (a *Agent) mountVolumes(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	out := make(map[string]string, len(pod.Spec.Volumes))
	for _, v := range pod.Spec.Volumes {
		var (
			path string
			err  error
		)
		switch {
		case v.EmptyDir != nil:
			path = filepath.Join(a.podDir(pod.UID), "volumes", "kubernetes.io~empty-dir", v.Name)
			err = os.MkdirAll(path, 0o777)
			if err == nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
				err = mountTmpfs(path)
			}
			if err == nil {
				err = os.Chmod(path, 0o777) // any user of the container may write
			}
		case v.HostPath != nil:
			path = v.HostPath.Path
			err = prepareHostPath(v.HostPath)
		case v.Secret != nil:
			path = filepath.Join(a.podDir(pod.UID), "volumes", "kubernetes.io~secret", v.Name)
			err = a.mountSecret(ctx, pod, v.Secret, path)
		case v.PersistentVolumeClaim != nil:
			path, err = a.claimPath(ctx, pod, v.PersistentVolumeClaim) // claims.go
		default:
			err = fmt.Errorf("volume %q: this node supports emptyDir, hostPath and secret volumes only", v.Name)
		}
		if err != nil {
			return nil, err
		}
		out[v.Name] = path
	}
	return out, nil
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

// unmountVolumes unmounts the pod's tmpfs volumes and removes its directory.
func (a *Agent) unmountVolumes(uid types.UID) error {
	dir := a.podDir(uid)
	for _, kind := range []string{"kubernetes.io~secret", "kubernetes.io~empty-dir"} {
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

// mounted tells whether path is a mount point (from /proc/self/mountinfo).
func mounted(path string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMount(f[4]) == path {
			return true
		}
	}
	return false
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
