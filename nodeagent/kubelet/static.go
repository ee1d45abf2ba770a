package kubelet

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// Annotations of static and mirror pods (the v1.0 kubelet's).
const (
	annotationSource = "kubernetes.io/config.source"
	annotationHash   = "kubernetes.io/config.hash"
	annotationMirror = "kubernetes.io/config.mirror"
	sourceFile       = "file"
	sourceHTTP       = "http"
)

func isMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[annotationMirror]
	return ok
}

// staticPods runs the static pods that read returns (--pod-manifest-path's or
// --manifest-url's), reading again every `every`, and keeps a mirror pod of each on
// the API server. A pod no longer read is stopped. With keepOnError, a read that
// fails (the URL does not answer) changes nothing; a directory's unreadable file
// only loses its own pod.
func (a *Agent) staticPods(ctx context.Context, every time.Duration, keepOnError bool, read func(context.Context) ([]*corev1.Pod, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	running := map[types.UID]*corev1.Pod{}
	for {
		pods, err := read(ctx)
		if err != nil {
			a.log.WithError(err).Warn("reading static pod manifests")
		}
		if err == nil || !keepOnError {
			a.syncStatic(ctx, pods, running)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.mirrorKick():
		}
	}
}

// syncStatic runs pods and stops those of running (the pods of the same source
// last read) that are not among them.
func (a *Agent) syncStatic(ctx context.Context, pods []*corev1.Pod, running map[types.UID]*corev1.Pod) {
	seen := map[types.UID]bool{}
	for _, p := range pods {
		seen[p.UID] = true
		running[p.UID] = p
		a.send(ctx, p, true)
		a.ensureMirror(ctx, p)
	}
	for uid, p := range running {
		if seen[uid] {
			continue
		}
		delete(running, uid)
		a.mu.Lock()
		w := a.workers[uid]
		a.mu.Unlock()
		if w != nil {
			w.gone.Store(true)
			w.wake()
		}
		if m := a.mirrorOf(p); m != nil {
			_ = a.api.DeletePod(ctx, m.Namespace, m.Name, m.UID)
		}
	}
}

// manifestTimeout bounds one fetch of --manifest-url.
const manifestTimeout = 10 * time.Second

// fetchManifests reads the static pods served at url: a pod, a v1 List or PodList
// of pods, or several YAML documents of either, in YAML or JSON. Each is made a
// static pod of node as a file's is (its uid derived from its content), with the
// source "http".
func fetchManifests(ctx context.Context, url, node string) ([]*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, manifestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("--manifest-url: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 10<<20))
	if err != nil {
		return nil, fmt.Errorf("--manifest-url %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("--manifest-url %s: %s", url, resp.Status)
	}
	return parseManifests(body, url, node, sourceHTTP)
}

// parseManifests reads the pods of a body of YAML documents (or JSON), each a pod
// or a list of pods.
func parseManifests(body []byte, where, node, source string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(body)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var head struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		raws := [][]byte{doc}
		if head.Kind == "List" || head.Kind == "PodList" {
			raws = raws[:0]
			for _, it := range head.Items {
				raws = append(raws, it)
			}
		}
		for _, raw := range raws {
			p, err := staticPod(raw, where, node, source)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// readManifests reads the static pods of a file or a directory (*.yaml, *.yml,
// *.json). Each is named <name>-<node>, bound to node, given a uid derived from
// its content, so an unchanged file is the same pod after a restart, and defaulted
// as the API server defaults a created pod.
func readManifests(path, node string) ([]*corev1.Pod, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		files = files[:0]
		for _, e := range entries {
			ext := strings.ToLower(filepath.Ext(e.Name()))
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		sort.Strings(files)
	}
	var out []*corev1.Pod
	var errs []string
	for _, f := range files {
		p, err := readManifest(f, node)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

func readManifest(file, node string) (*corev1.Pod, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return staticPod(b, file, node, sourceFile)
}

// staticPod makes the static pod of node from one manifest b (YAML or JSON) read
// from where: named <name>-<node>, bound to node, its uid derived from its content
// and the node, defaulted as the API server defaults a created pod.
func staticPod(b []byte, where, node, source string) (*corev1.Pod, error) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(b, &pod); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if pod.Kind != "" && pod.Kind != "Pod" {
		return nil, fmt.Errorf("%s: kind %s is not a Pod", where, pod.Kind)
	}
	if pod.Name == "" || len(pod.Spec.Containers) == 0 {
		return nil, fmt.Errorf("%s: a static pod needs a name and at least one container", where)
	}
	sum := sha256.Sum256(append(append([]byte{}, b...), node...))
	hash := hex.EncodeToString(sum[:])
	pod.Name = pod.Name + "-" + node
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.UID = types.UID(fmt.Sprintf("%s-%s-%s-%s-%s", hash[0:8], hash[8:12], hash[12:16], hash[16:20], hash[20:32]))
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[annotationSource] = source
	pod.Annotations[annotationHash] = hash[:16]
	pod.Spec.NodeName = node
	defaultStaticPod(&pod)
	return &pod, nil
}

// podKind is the API's table entry for pods: a static pod gets the defaults and the
// create-time preparation (status reset, QoS class) the API server gives a pod.
var podKind = func() *kinds.Resource {
	r, ok := kinds.Lookup("pods")
	if !ok {
		panic("kubelet: no pods in the table of kinds")
	}
	return r
}()

// defaultStaticPod fills in what the API server would default on create.
func defaultStaticPod(pod *corev1.Pod) {
	podKind.Default(pod)
	podKind.PrepareForCreate(pod)
}

// mirrorSeen records a mirror pod from the watch; one marked for deletion is
// deleted for good and then re-created (deleting a mirror pod does not stop its
// static pod).
func (a *Agent) mirrorSeen(pod *corev1.Pod) {
	a.mu.Lock()
	if a.mirrors == nil {
		a.mirrors = map[string]*corev1.Pod{}
	}
	a.mirrors[pod.Namespace+"/"+pod.Name] = pod
	a.mu.Unlock()
	if pod.DeletionTimestamp != nil {
		go func() {
			_ = a.api.DeletePod(context.Background(), pod.Namespace, pod.Name, pod.UID)
		}()
	}
}

func (a *Agent) mirrorGone(pod *corev1.Pod) {
	a.mu.Lock()
	if m := a.mirrors[pod.Namespace+"/"+pod.Name]; m != nil && m.UID == pod.UID {
		delete(a.mirrors, pod.Namespace+"/"+pod.Name)
	}
	a.mu.Unlock()
	select {
	case a.mirrorCh <- struct{}{}:
	default:
	}
}

func (a *Agent) mirrorKick() <-chan struct{} { return a.mirrorCh }

// mirrorOf is the mirror pod of a static pod, if the server has one.
func (a *Agent) mirrorOf(pod *corev1.Pod) *corev1.Pod {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.mirrors[pod.Namespace+"/"+pod.Name]
	if m == nil || m.Annotations[annotationMirror] != pod.Annotations[annotationHash] || m.DeletionTimestamp != nil {
		return nil
	}
	return m
}

// ensureMirror creates the mirror pod of a static pod unless it exists; a mirror of
// an older version of the manifest is replaced.
func (a *Agent) ensureMirror(ctx context.Context, pod *corev1.Pod) {
	a.mu.Lock()
	m := a.mirrors[pod.Namespace+"/"+pod.Name]
	a.mu.Unlock()
	if m != nil && m.Annotations[annotationMirror] == pod.Annotations[annotationHash] {
		return
	}
	if m != nil {
		_ = a.api.DeletePod(ctx, m.Namespace, m.Name, m.UID)
		return // re-created when the deletion is seen
	}
	mirror := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        pod.Name,
			Namespace:   pod.Namespace,
			Labels:      pod.Labels,
			Annotations: map[string]string{},
		},
		Spec: *pod.Spec.DeepCopy(),
	}
	for k, v := range pod.Annotations {
		mirror.Annotations[k] = v
	}
	mirror.Annotations[annotationMirror] = pod.Annotations[annotationHash]
	created, err := a.cs.CoreV1().Pods(pod.Namespace).Create(ctx, mirror, metav1.CreateOptions{})
	if err != nil {
		a.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("creating the mirror pod")
		return
	}
	a.mirrorSeen(created)
	a.kick(pod.UID)
}
