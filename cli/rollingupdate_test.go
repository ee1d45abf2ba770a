package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func testRC(name string, replicas int32, selector map[string]string, image string) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), ResourceVersion: "7", Labels: maps.Clone(selector)},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptrTo(replicas),
			Selector: maps.Clone(selector),
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(selector)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}},
			},
		},
		Status: corev1.ReplicationControllerStatus{Replicas: replicas},
	}
}

func TestRollingUpdateHash(t *testing.T) {
	rc := testRC("frontend", 3, map[string]string{"name": "frontend"}, "php:v1")
	h1, err := hashObject(rc)
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := hashObject(rc.DeepCopy())
	other := rc.DeepCopy()
	other.Spec.Template.Spec.Containers[0].Image = "php:v2"
	h3, _ := hashObject(other)
	other.ResourceVersion = "8"
	h4, _ := hashObject(other)
	if len(h1) != 32 || strings.Trim(h1, "0123456789abcdef") != "" {
		t.Errorf("hash %q is not 32 hex digits", h1)
	}
	if h1 != h2 {
		t.Errorf("hash is not deterministic: %s != %s", h1, h2)
	}
	if h1 == h3 || h3 == h4 {
		t.Errorf("hash ignores the image or the resource version: %s %s %s", h1, h3, h4)
	}
}

func TestRollingUpdateNames(t *testing.T) {
	old := testRC("frontend", 3, map[string]string{"name": "frontend"}, "php:v1")
	inProgress := old.DeepCopy()
	inProgress.Annotations = map[string]string{nextControllerAnnot: "frontend-abc"}
	tests := []struct {
		name string
		args []string
		old  *corev1.ReplicationController
		want string
	}{
		{"hashed later", []string{"frontend"}, old, ""},
		{"given", []string{"frontend", "frontend-v2"}, old, "frontend-v2"},
		{"in progress", []string{"frontend"}, inProgress, "frontend-abc"},
		{"given wins", []string{"frontend", "x"}, inProgress, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := findNewName(tt.args, tt.old); got != tt.want {
				t.Errorf("findNewName = %q, want %q", got, tt.want)
			}
		})
	}

	rc, err := newControllerFromCurrent(inProgress, "", "php:v2", "deployment")
	if err != nil {
		t.Fatal(err)
	}
	withImage := inProgress.DeepCopy()
	withImage.Spec.Template.Spec.Containers[0].Image = "php:v2"
	hash, _ := hashObject(withImage)
	if rc.Name != "frontend-"+hash || rc.Spec.Selector["deployment"] != hash || rc.Spec.Template.Labels["deployment"] != hash {
		t.Errorf("new RC %s, selector %v, template labels %v; want hash %s", rc.Name, rc.Spec.Selector, rc.Spec.Template.Labels, hash)
	}
	if rc.ResourceVersion != "" || rc.UID != "" || rc.Annotations[nextControllerAnnot] != "" || old.Spec.Selector["deployment"] != "" {
		t.Errorf("new RC keeps the old identity or the old RC was changed: %+v", rc.ObjectMeta)
	}
	multi := old.DeepCopy()
	multi.Spec.Template.Spec.Containers = append(multi.Spec.Template.Spec.Containers, corev1.Container{Name: "b"})
	if _, err := newControllerFromCurrent(multi, "", "x", "deployment"); err == nil || !strings.Contains(err.Error(), "multi-container") {
		t.Errorf("multi-container error = %v", err)
	}
}

func TestRollingUpdateNextStep(t *testing.T) {
	tests := []struct {
		old, new, desired int32
		wantOld, wantNew  int32
		ok                bool
	}{
		{3, 0, 3, 2, 1, true},
		{2, 1, 3, 1, 2, true},
		{1, 2, 3, 0, 3, true},
		{0, 3, 3, 0, 3, false},
		{2, 1, 1, 2, 1, false}, // desired reached: the old RC is stopped after the loop
		{0, 1, 3, 0, 1, false}, // old empty: the new RC is scaled after the loop
		{5, 2, 3, 4, 3, true},
	}
	for _, tt := range tests {
		o, n, ok := nextStep(tt.old, tt.new, tt.desired)
		if o != tt.wantOld || n != tt.wantNew || ok != tt.ok {
			t.Errorf("nextStep(%d, %d, %d) = %d, %d, %v; want %d, %d, %v", tt.old, tt.new, tt.desired, o, n, ok, tt.wantOld, tt.wantNew, tt.ok)
		}
	}
}

func TestRollingUpdateResumeDetection(t *testing.T) {
	tests := []struct {
		name    string
		annots  map[string]string
		want    int32
		wantErr string
	}{
		{"resumable", map[string]string{desiredReplicasAnnot: "3", updateSourceIDAnnot: "frontend:u1"}, 3, ""},
		{"other source", map[string]string{desiredReplicasAnnot: "3", updateSourceIDAnnot: "other:u1"}, 0, "Missing/unexpected annotations"},
		{"no desired", map[string]string{updateSourceIDAnnot: "frontend:u1"}, 0, "Missing/unexpected annotations"},
		{"none", nil, 0, "Missing/unexpected annotations"},
		{"bad count", map[string]string{desiredReplicasAnnot: "x", updateSourceIDAnnot: "frontend:u1"}, 0, "unable to parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "frontend-x", Annotations: tt.annots}}
			got, err := resumeDesired(rc, "frontend:u1")
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) || got != tt.want {
				t.Errorf("resumeDesired = %d, %v; want %d, %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestRollingUpdateValidate(t *testing.T) {
	old := testRC("redis-master", 3, map[string]string{"name": "redis-master"}, "v1")
	tests := []struct {
		name    string
		newName string
		sel     map[string]string
		wantErr string
	}{
		{"extra label only", "redis-master-v2", map[string]string{"name": "redis-master", "version": "v2"}, "matching key with non-equal value"},
		{"changed value", "redis-master-v2", map[string]string{"name": "redis-master2"}, ""},
		{"same name", "redis-master", map[string]string{"name": "x"}, "cannot have the same name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateUpdate(old, testRC(tt.newName, 1, tt.sel, "v2"))
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("validateUpdate = %v, want %q", err, tt.wantErr)
			}
		})
	}
	rc := testRC("x", 2, nil, "i")
	for _, st := range []struct {
		status corev1.ReplicationControllerStatus
		gen    int64
		want   bool
	}{{corev1.ReplicationControllerStatus{Replicas: 2}, 0, true}, {corev1.ReplicationControllerStatus{Replicas: 1}, 0, false}, {corev1.ReplicationControllerStatus{Replicas: 2, ObservedGeneration: 1}, 2, false}} {
		rc.Status, rc.Generation = st.status, st.gen
		if got := hasDesiredReplicas(rc); got != st.want {
			t.Errorf("hasDesiredReplicas(%+v gen %d) = %v", st.status, st.gen, got)
		}
	}
}

// fakeCluster is a fake API whose "RC controller" runs whenever the update sleeps:
// every RC's status catches up with its spec, and its pods match the count.
type fakeCluster struct {
	t      *testing.T
	client *fake.Clientset
	now    time.Time
	sleeps int
	stopAt int // the sleep that fails as an interrupt would (0: never)
}

func newFakeCluster(t *testing.T, objs ...runtime.Object) *fakeCluster {
	return &fakeCluster{t: t, client: fake.NewClientset(objs...), now: time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (f *fakeCluster) clock() clock {
	return clock{now: func() time.Time { return f.now }, sleep: func(ctx context.Context, d time.Duration) error {
		f.sleeps++
		if f.stopAt > 0 && f.sleeps == f.stopAt {
			return context.Canceled
		}
		f.now = f.now.Add(d)
		f.sync(ctx)
		return nil
	}}
}

func (f *fakeCluster) sync(ctx context.Context) {
	rcs := f.client.CoreV1().ReplicationControllers("default")
	list, err := rcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, rc := range list.Items {
		rc.Status.Replicas = replicasOf(&rc)
		rc.Status.ObservedGeneration = rc.Generation
		if _, err := rcs.UpdateStatus(ctx, &rc, metav1.UpdateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
}

// state is the RCs and pods, one line each, for the golden files.
func (f *fakeCluster) state() string {
	var b strings.Builder
	rcs, _ := f.client.CoreV1().ReplicationControllers("default").List(context.Background(), metav1.ListOptions{})
	for _, rc := range rcs.Items {
		fmt.Fprintf(&b, "rc %s replicas=%d image=%s selector=%v template=%v annotations=%v\n", rc.Name, replicasOf(&rc),
			rc.Spec.Template.Spec.Containers[0].Image, rc.Spec.Selector, rc.Spec.Template.Labels, rc.Annotations)
	}
	pods, _ := f.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s labels=%v\n", p.Name, p.Labels)
	}
	return b.String()
}

// rollingUpdate parses args as the command line would and runs the command
// against the fake cluster; it returns stdout plus the error line, if any.
func (f *fakeCluster) rollingUpdate(args ...string) string {
	f.t.Helper()
	var cli root
	parser, err := kong.New(&cli, kong.Exit(func(int) { f.t.Fatalf("kong exited on %v", args) }))
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := parser.Parse(append([]string{"rolling-update"}, args...)); err != nil {
		f.t.Fatalf("parse %v: %v", args, err)
	}
	cmd := cli.RollingUpdate
	cmd.clock = f.clock()
	var out bytes.Buffer
	if err := cmd.run(context.Background(), &out, f.client, "default"); err != nil {
		fmt.Fprintln(&out, kubectlMessage(err))
	}
	return out.String()
}

func frontendPods() []runtime.Object {
	var objs []runtime.Object
	for _, n := range []string{"frontend-a1b2c", "frontend-d3e4f", "frontend-g5h6i"} {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "default", Labels: map[string]string{"name": "frontend"}}})
	}
	return objs
}

func TestRollingUpdateGolden(t *testing.T) {
	v2 := filepath.Join("testdata", "redis-master-controller-v2.yaml")
	frontend := func() []runtime.Object {
		return append(frontendPods(), testRC("frontend", 3, map[string]string{"name": "frontend"}, "kubeguide/guestbook-php-frontend"))
	}
	image := []string{"frontend", "--image=kubeguide/guestbook-php-frontend:v2", "--update-period=1s", "--poll-interval=1s"}
	tests := []struct {
		name   string
		objs   []runtime.Object
		stopAt int        // interrupt the first run at this sleep
		runs   [][]string // invocations, in order
	}{
		{"image", frontend(), 0, [][]string{image}},
		{"file", []runtime.Object{testRC("redis-master", 3, map[string]string{"name": "redis-master", "version": "v1"}, "kubeguide/redis-master")},
			0, [][]string{{"redis-master", "-f", v2}}},
		{"resume", frontend(), 4, [][]string{image, image}},
		{"rollback", frontend(), 7, [][]string{image, append(slices.Clone(image), "--rollback")}},
		{"dry-run", frontend(), 0, [][]string{append(slices.Clone(image), "--dry-run")}},
		{"errors", frontend(), 0, [][]string{{"frontend"}, {"nosuch", "--image=x"}, {"frontend", "--image=x", "--rollback"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeCluster(t, tt.objs...)
			f.stopAt = tt.stopAt
			var all strings.Builder
			for _, args := range tt.runs {
				fmt.Fprintf(&all, "$ kubeactor rolling-update %s\n%s", strings.Join(args, " "), f.rollingUpdate(args...))
				f.stopAt = 0
			}
			fmt.Fprintf(&all, "--- state after %s of fake time\n%s", f.now.Sub(time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)), f.state())
			golden(t, "rolling-update-"+tt.name+".golden", []byte(all.String()))
		})
	}
}

func TestRollingUpdateTimeout(t *testing.T) {
	f := newFakeCluster(t, append(frontendPods(), testRC("frontend", 3, map[string]string{"name": "frontend"}, "php"))...)
	c := f.clock()
	// A controller that never catches up: sleeping only advances the clock.
	c.sleep = func(_ context.Context, d time.Duration) error { f.now = f.now.Add(d); return nil }
	u := &updater{rcs: f.client.CoreV1().ReplicationControllers("default"), out: &bytes.Buffer{}, clock: c, interval: time.Second, timeout: 10 * time.Second}
	_, err := u.scaleAndWait(context.Background(), "frontend", 4)
	if !errors.Is(err, errTimeout) {
		t.Fatalf("scaleAndWait = %v, want a timeout", err)
	}
	if got := f.now.Sub(time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)); got != 10*time.Second {
		t.Errorf("gave up after %s, want 10s", got)
	}
}
