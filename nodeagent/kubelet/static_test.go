package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReadManifests(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"web.yaml":     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: kubeactor/testserver:latest\n",
		"db.json":      `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"db","namespace":"data"},"spec":{"containers":[{"name":"db","image":"redis:7"}]}}`,
		".hidden.yaml": "not: read",
		"notes.txt":    "ignored",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pods, err := readManifests(dir, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Namespace+"/"+p.Name] = p
	}
	web, db := byName["default/web-node-1"], byName["data/db-node-1"]
	if web == nil || db == nil {
		t.Fatalf("pods %v", byName)
	}
	if web.Spec.NodeName != "node-1" || web.Annotations[annotationSource] != sourceFile || web.Annotations[annotationHash] == "" {
		t.Errorf("web = %+v", web.ObjectMeta)
	}
	if web.Spec.RestartPolicy != corev1.RestartPolicyAlways || web.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways ||
		db.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || *web.Spec.TerminationGracePeriodSeconds != 30 {
		t.Errorf("defaults not applied: %+v %+v", web.Spec, db.Spec.Containers[0])
	}
	// The same file gives the same uid (a restarted agent finds its containers);
	// a changed file a new one.
	again, _ := readManifests(dir, "node-1")
	for _, p := range again {
		if p.UID != byName[p.Namespace+"/"+p.Name].UID {
			t.Errorf("uid of %s changed between reads", p.Name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(strings.Replace(files["web.yaml"], "latest", "v2", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	changed, _ := readManifests(dir, "node-1")
	for _, p := range changed {
		if p.Name == "web-node-1" && p.UID == web.UID {
			t.Errorf("a changed manifest kept its uid")
		}
	}
}

func TestReadManifestErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"not a pod", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "is not a Pod"},
		{"no containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "at least one container"},
		{"unknown field", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containerz: []}\n", "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(f, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := readManifests(f, "n"); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// The pull policy a static pod's container gets by default: Always for "latest" or
// no tag, IfNotPresent for another tag or a digest (the API server's rule).
func TestStaticPodPullPolicy(t *testing.T) {
	tests := map[string]corev1.PullPolicy{
		"redis": corev1.PullAlways, "redis:7": corev1.PullIfNotPresent,
		"localhost:5000/redis": corev1.PullAlways, "localhost:5000/redis:latest": corev1.PullAlways,
		"redis@sha256:abc": corev1.PullIfNotPresent,
	}
	for image, want := range tests {
		f := filepath.Join(t.TempDir(), "p.yaml")
		body := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: " + image + "\n"
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		pods, err := readManifests(f, "n")
		if err != nil || len(pods) != 1 {
			t.Fatalf("%s: %v", image, err)
		}
		if got := pods[0].Spec.Containers[0].ImagePullPolicy; got != want {
			t.Errorf("%s: pull policy %s, want %s", image, got, want)
		}
	}
}

func TestGracePeriod(t *testing.T) {
	five, ten := int64(5), int64(10)
	tests := []struct {
		name string
		pod  corev1.Pod
		want time.Duration
	}{
		{"default", corev1.Pod{}, 30 * time.Second},
		{"spec", corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &ten}}, 10 * time.Second},
		{"deletion wins", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionGracePeriodSeconds: &five}, Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &ten}}, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := gracePeriod(&tt.pod); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
