package podsync

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVolumeType(t *testing.T) {
	tests := []struct {
		src  corev1.VolumeSource
		want string
	}{
		{corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}, "emptyDir"},
		{corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}, "hostPath"},
		{corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{}}, "rbd"},
		{corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}}, "iscsi"},
		{corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{}}, "gcePersistentDisk"},
		{corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{}}, "awsElasticBlockStore"},
		{corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}, "persistentVolumeClaim"},
		{corev1.VolumeSource{}, ""},
	}
	for _, tt := range tests {
		if got := VolumeType(&corev1.Volume{Name: "v", VolumeSource: tt.src}); got != tt.want {
			t.Errorf("VolumeType = %q, want %q", got, tt.want)
		}
	}
}

func TestDownwardAPIFiles(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "web", Namespace: "prod", UID: "u-1",
		Labels:      map[string]string{"zone": "us-est-coast", "cluster": "test-cluster1", "rack": "rack-22"},
		Annotations: map[string]string{"build": "two", "builder": `john "doe"`},
	}}
	mode := int32(0o600)
	item := func(path, field string) corev1.DownwardAPIVolumeFile {
		return corev1.DownwardAPIVolumeFile{Path: path, FieldRef: &corev1.ObjectFieldSelector{FieldPath: field}}
	}
	withMode := item("name", "metadata.name")
	withMode.Mode = &mode
	tests := []struct {
		name  string
		items []corev1.DownwardAPIVolumeFile
		want  string // path mode data, one per file
		err   string
	}{
		{"labels", []corev1.DownwardAPIVolumeFile{item("labels", "metadata.labels")},
			"labels 644 cluster=\"test-cluster1\"\nrack=\"rack-22\"\nzone=\"us-est-coast\"", ""},
		{"annotations are quoted", []corev1.DownwardAPIVolumeFile{item("annotations", "metadata.annotations")},
			"annotations 644 build=\"two\"\nbuilder=\"john \\\"doe\\\"\"", ""},
		{"name, namespace, uid, sorted, item mode", []corev1.DownwardAPIVolumeFile{item("ns", "metadata.namespace"), withMode, item("sub/uid", "metadata.uid")},
			"name 600 web|ns 644 prod|sub/uid 644 u-1", ""},
		{"one label", []corev1.DownwardAPIVolumeFile{item("zone", "metadata.labels['zone']")}, "zone 644 us-est-coast", ""},
		{"unknown field", []corev1.DownwardAPIVolumeFile{item("ip", "status.podIP")}, "", "not served"},
		{"escape", []corev1.DownwardAPIVolumeFile{item("../x", "metadata.name")}, "", "'..'"},
		{"absolute", []corev1.DownwardAPIVolumeFile{item("/x", "metadata.name")}, "", "relative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := DownwardAPIFiles(pod, &corev1.DownwardAPIVolumeSource{Items: tt.items})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, fmt.Sprintf("%s %o %s", f.Path, f.Mode, f.Data))
			}
			if strings.Join(got, "|") != tt.want {
				t.Errorf("got %q\nwant %q", strings.Join(got, "|"), tt.want)
			}
		})
	}
}

func TestGitRepoClone(t *testing.T) {
	tests := []struct {
		name string
		src  corev1.GitRepoVolumeSource
		want string
		err  string
	}{
		{"default directory", corev1.GitRepoVolumeSource{Repository: "https://example.com/app.git"}, "clone -- https://example.com/app.git|||", ""},
		{"the volume itself", corev1.GitRepoVolumeSource{Repository: "file:///r", Directory: "."}, "clone -- file:///r .|.||", ""},
		{"revision", corev1.GitRepoVolumeSource{Repository: "file:///r", Directory: "src", Revision: "abc123"}, "clone -- file:///r src|src|checkout abc123|reset --hard", ""},
		{"option as repository", corev1.GitRepoVolumeSource{Repository: "--upload-pack=evil"}, "", "must not start with '-'"},
		{"option as revision", corev1.GitRepoVolumeSource{Repository: "file:///r", Revision: "-f"}, "", "must not start with '-'"},
		{"escaping directory", corev1.GitRepoVolumeSource{Repository: "file:///r", Directory: "../x"}, "", "'..'"},
		{"no repository", corev1.GitRepoVolumeSource{}, "", "no repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := GitRepoClone(&tt.src)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join([]string{strings.Join(g.Clone, " "), g.Subdir, strings.Join(g.Checkout, " "), strings.Join(g.Reset, " ")}, "|")
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
