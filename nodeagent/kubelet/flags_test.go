package kubelet

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// TestAgentWithoutRegistering: with --register-node=false the agent creates no Node
// but runs the pods bound to its name, and posts the node's status once someone
// else has created it.
func TestAgentWithoutRegistering(t *testing.T) {
	eng, cs := runAgent(t, func(c *Config) { c.NoRegister = true })
	ctx := context.Background()
	if _, err := cs.CoreV1().Pods("default").Create(ctx, testPod("web", corev1.RestartPolicyAlways), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pod's container runs", func() error {
		if c, ok := appContainer(eng, "uid-web"); !ok || !c.Running() {
			return fmt.Errorf("no running app container")
		}
		return nil
	})
	if _, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err == nil {
		t.Fatal("the agent registered its node")
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node's status posted", func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Status.Capacity.Pods().Value() != 10 || n.Status.NodeInfo.KubeletVersion != "test" {
			return fmt.Errorf("status %+v", n.Status)
		}
		return nil
	})
}

func TestParseManifests(t *testing.T) {
	pod := func(name string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n  containers:\n  - name: c\n    image: app:1\n"
	}
	list := `{"apiVersion":"v1","kind":"List","items":[` +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"app:1"}]}},` +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"app:1"}]}}]}`
	tests := []struct {
		name, body, want, err string
	}{
		{"one pod", pod("web"), "default/web-n1", ""},
		{"documents", pod("web") + "---\n" + pod("db") + "---\n", "default/web-n1 default/db-n1", ""},
		{"a list", list, "default/a-n1 ns/b-n1", ""},
		{"a pod list in YAML", "apiVersion: v1\nkind: PodList\nitems:\n- " + strings.ReplaceAll(pod("x"), "\n", "\n  "), "default/x-n1", ""},
		{"not a pod", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "", "is not a Pod"},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, err := parseManifests([]byte(tt.body), "http://x/pods", "n1", sourceHTTP)
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
			for _, p := range pods {
				got = append(got, p.Namespace+"/"+p.Name)
				if p.Annotations[annotationSource] != sourceHTTP || p.Spec.NodeName != "n1" || p.UID == "" {
					t.Errorf("%s: %+v", p.Name, p.ObjectMeta)
				}
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("pods %v, want %q", got, tt.want)
			}
		})
	}
}

// TestAgentManifestURL: the pods served at --manifest-url run, with a mirror pod; a
// failed fetch changes nothing; a pod the URL stops serving is stopped.
func TestAgentManifestURL(t *testing.T) {
	var (
		mu     sync.Mutex
		body   = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: " + testImage + "\n    imagePullPolicy: IfNotPresent\n"
		status = http.StatusOK
		hits   atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	eng, cs := runAgent(t, func(c *Config) { c.ManifestURL, c.HTTPCheckFrequency = srv.URL, 50*time.Millisecond })
	ctx := context.Background()
	var uid string
	eventually(t, "the static pod runs with its mirror", func() error {
		m, err := cs.CoreV1().Pods("default").Get(ctx, "web-n1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if m.Annotations[annotationSource] != sourceHTTP || m.Annotations[annotationMirror] == "" {
			return fmt.Errorf("mirror %+v", m.ObjectMeta)
		}
		cs, _ := eng.ListContainers(ctx, map[string]string{"io.kubernetes.container.name": "app"})
		for _, c := range cs {
			if c.Running() {
				uid = c.Labels[labelPodUID]
				return nil
			}
		}
		return fmt.Errorf("no running container")
	})

	mu.Lock()
	status = http.StatusInternalServerError
	mu.Unlock()
	from := hits.Load()
	eventually(t, "three failed fetches", func() error {
		if hits.Load() < from+3 {
			return fmt.Errorf("%d fetches", hits.Load()-from)
		}
		return nil
	})
	if c, ok := appContainer(eng, uid); !ok || !c.Running() {
		t.Fatalf("a failed fetch stopped the pod: %+v", c)
	}

	mu.Lock()
	status, body = http.StatusOK, "apiVersion: v1\nkind: List\nitems: []\n"
	mu.Unlock()
	eventually(t, "the pod no longer served is stopped", func() error {
		if c, ok := appContainer(eng, uid); ok && c.Running() {
			return fmt.Errorf("still running")
		}
		return nil
	})
}

// TestCollectImages: past the high threshold, unused images go; the infra image and
// the image of a container never do, nor an image seen for less than the minimum age.
func TestCollectImages(t *testing.T) {
	eng := newFakeEngine(testPause, testImage, "unused:1", "unused:2")
	ctx := context.Background()
	id, err := eng.CreateContainer(ctx, runtime.ContainerConfig{Name: "c", Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	log, _ := logtest.NewNullLogger()
	api := apiclient.NewForClientset(fake.NewSimpleClientset())
	now := time.Now()
	a := New(Config{NodeName: "n1", PauseImage: testPause, ImageGC: &ImageGCPolicy{High: 0, Low: 0, MinAge: time.Minute}}, api, eng, log)
	a.engineRoot = t.TempDir() // a real filesystem, in use above 0%
	a.now = func() time.Time { return now }

	if err := a.collectImages(ctx); err != nil {
		t.Fatal(err)
	}
	if len(eng.removed) != 0 {
		t.Fatalf("images seen for the first time were removed: %v", eng.removed)
	}
	now = now.Add(2 * time.Minute)
	if err := a.collectImages(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(eng.removed, ","); got != "sha256:unused:1,sha256:unused:2" {
		t.Errorf("removed %q", got)
	}
	if !eng.images[testPause] || !eng.images[testImage] {
		t.Errorf("images left %v", eng.images)
	}

	// 100 disables the collection.
	eng2 := newFakeEngine(testPause, "unused:1")
	b := New(Config{PauseImage: testPause, ImageGC: &ImageGCPolicy{High: 100, Low: 0, MinAge: time.Nanosecond}}, api, eng2, log)
	b.engineRoot = t.TempDir()
	if err := b.collectImages(ctx); err != nil || len(eng2.removed) != 0 {
		t.Errorf("high 100: removed %v (%v)", eng2.removed, err)
	}

	// A scope leaves every image without a tag of that prefix alone.
	eng3 := newFakeEngine(testPause, "unused:1", "scoped/unused:2")
	c := New(Config{PauseImage: testPause, ImageGC: &ImageGCPolicy{High: 0, Low: 0, MinAge: time.Nanosecond, Scope: "scoped/"}}, api, eng3, log)
	c.engineRoot = t.TempDir()
	c.now = func() time.Time { return now }
	for range 2 {
		now = now.Add(time.Minute)
		if err := c.collectImages(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(eng3.removed, ","); got != "sha256:scoped/unused:2" {
		t.Errorf("scope scoped/: removed %q", got)
	}
}
