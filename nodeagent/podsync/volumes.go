package podsync

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// VolumeType is the name of the source a volume uses, as the API spells the field
// ("emptyDir", "hostPath", "rbd", ...); "" when none is set.
func VolumeType(v *corev1.Volume) string {
	rv := reflect.ValueOf(v.VolumeSource)
	rt := rv.Type()
	for i := range rt.NumField() {
		f := rv.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// VolumeFile is one file of a projected volume (downwardAPI), relative to the
// volume's directory.
type VolumeFile struct {
	Path string
	Data []byte
	Mode uint32 // permission bits
}

// DownwardAPIFiles are the files of a downwardAPI volume of pod: one per item, with
// metadata.name, metadata.namespace and metadata.uid as their value, and
// metadata.labels and metadata.annotations as one `key="value"` line per entry,
// sorted by key (Kubernetes' format). A path that is absolute or leaves the volume,
// or a field this node does not serve, is an error. The files are sorted by path.
func DownwardAPIFiles(pod *corev1.Pod, src *corev1.DownwardAPIVolumeSource) ([]VolumeFile, error) {
	mode := uint32(0o644)
	if src.DefaultMode != nil {
		mode = uint32(*src.DefaultMode) & 0o777
	}
	var out []VolumeFile
	for _, it := range src.Items {
		if err := relativeInside(it.Path); err != nil {
			return nil, fmt.Errorf("downwardAPI item %q: %w", it.Path, err)
		}
		if it.FieldRef == nil {
			return nil, fmt.Errorf("downwardAPI item %q: only fieldRef items are served on this node", it.Path)
		}
		var data string
		switch fp := it.FieldRef.FieldPath; fp {
		case "metadata.labels":
			data = formatMap(pod.Labels)
		case "metadata.annotations":
			data = formatMap(pod.Annotations)
		case "metadata.name", "metadata.namespace", "metadata.uid":
			data, _ = fieldRef(pod, fp, "", "")
		default:
			if k, ok := subscript(fp, "metadata.labels"); ok {
				data = pod.Labels[k]
			} else if k, ok := subscript(fp, "metadata.annotations"); ok {
				data = pod.Annotations[k]
			} else {
				return nil, fmt.Errorf("downwardAPI item %q: field %q is not served in volumes", it.Path, fp)
			}
		}
		m := mode
		if it.Mode != nil {
			m = uint32(*it.Mode) & 0o777
		}
		out = append(out, VolumeFile{Path: it.Path, Data: []byte(data), Mode: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// formatMap is Kubernetes' downward API format of labels and annotations.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return strings.Join(lines, "\n")
}

// relativeInside checks that p is a relative path that stays inside the directory
// it is joined to.
func relativeInside(p string) error {
	if p == "" || filepath.IsAbs(p) {
		return fmt.Errorf("must be a relative path")
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("must not contain '..'")
		}
	}
	return nil
}

// GitClone is how a gitRepo volume is made, as Kubernetes does: `git clone --
// <repository> [<directory>]` in the empty volume directory, then, with a
// revision, `git checkout <revision>` and `git reset --hard` in the clone.
type GitClone struct {
	Clone    []string // git arguments of the clone, run in the volume's directory
	Subdir   string   // where the repository is in the volume: "." for itself, "" for the one directory git made
	Checkout []string // git arguments run in Subdir; nil without a revision
	Reset    []string
}

// GitRepoClone is the plan of a gitRepo volume. A repository or revision that git
// would read as an option, or a directory that leaves the volume, is an error.
func GitRepoClone(src *corev1.GitRepoVolumeSource) (GitClone, error) {
	if src.Repository == "" {
		return GitClone{}, fmt.Errorf("gitRepo: no repository")
	}
	if strings.HasPrefix(src.Repository, "-") {
		return GitClone{}, fmt.Errorf("gitRepo: repository %q must not start with '-'", src.Repository)
	}
	if strings.HasPrefix(src.Revision, "-") {
		return GitClone{}, fmt.Errorf("gitRepo: revision %q must not start with '-'", src.Revision)
	}
	dir := src.Directory
	g := GitClone{Clone: []string{"clone", "--", src.Repository}, Subdir: dir}
	if dir != "" {
		if dir != "." {
			if err := relativeInside(dir); err != nil {
				return GitClone{}, fmt.Errorf("gitRepo: directory %q: %w", dir, err)
			}
		}
		g.Clone = append(g.Clone, dir)
	}
	if src.Revision != "" {
		g.Checkout = []string{"checkout", src.Revision}
		g.Reset = []string{"reset", "--hard"}
	}
	return g, nil
}
