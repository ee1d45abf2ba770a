package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/internal/poll"
	"github.com/kubeactor/kubeactor/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Issue 18, "Reliability at scale": kill -9 the server in the middle of the big
// build; after the restart every acknowledged write is there, the RCs finish at
// exactly their replicas, and nothing is bound twice.

// crashBuildNamespaces is how many namespaces the RCs and the direct writes spread over.
const crashBuildNamespaces = 5

// crashFigures is what one crash build measured.
type crashFigures struct {
	rcs, acked          int           // RCs; direct writes acknowledged before the kill
	podsAtKill, boundAt int           // pods the watch had seen, and bound, at the kill
	toKill              time.Duration // from the first RC create to the kill
	restartReady        time.Duration // from the kill to /readyz
	toFinish            time.Duration // from the kill to every RC full and every pod bound
	resumes             int           // times the pod watch resumed
}

// TestCrashBuild is the crash build at a size `make test` affords on 2 cores (500
// simulated nodes, 15,000 pods by default; KUBEACTOR_CRASH_NODES and _PODS change it).
func TestCrashBuild(t *testing.T) {
	nodes := testenv.PositiveInt(t, "KUBEACTOR_CRASH_NODES", 500)
	pods := testenv.PositiveInt(t, "KUBEACTOR_CRASH_PODS", 15000)
	f := crashBuild(t, nodes, pods)
	t.Logf("%d nodes, %d pods in %d RCs, %d direct writes acknowledged: killed after %s at %d pods (%d bound), ready %s after the kill, done %s after it, the watch resumed %d times",
		nodes, pods, f.rcs, f.acked, f.toKill.Round(time.Millisecond), f.podsAtKill, f.boundAt, f.restartReady.Round(time.Millisecond), f.toFinish.Round(time.Millisecond), f.resumes)
}

// BenchmarkCrashBuild is the crash build at the envelope's size (5,000 nodes, 150,000
// pods unless KUBEACTOR_CRASH_NODES and _PODS say otherwise), with the same checks as
// TestCrashBuild, reporting the times.
func BenchmarkCrashBuild(b *testing.B) {
	if os.Getenv("KUBEACTOR_CRASH_FULL") == "" {
		// It takes the machine for several minutes, so make bench leaves it out. Since the
		// simulator's heartbeats have their own queue it passes at full size (session 11:
		// killed at 140,450 pods, every RC exact); one run on a machine also compiling
		// failed before the kill, an RC create answered 504 after 30 s
		// (docs/benchmarks.md, "Kill -9 in the middle of the build").
		b.Skip("several minutes of the whole machine (see the comment); KUBEACTOR_CRASH_FULL=1 runs it")
	}
	nodes := testenv.PositiveInt(b, "KUBEACTOR_CRASH_NODES", 5000)
	pods := testenv.PositiveInt(b, "KUBEACTOR_CRASH_PODS", 150000)
	for range b.N {
		f := crashBuild(b, nodes, pods)
		b.ReportMetric(float64(nodes), "nodes")
		b.ReportMetric(float64(pods), "pods")
		b.ReportMetric(float64(f.rcs), "rcs")
		b.ReportMetric(float64(f.acked), "direct-writes")
		b.ReportMetric(float64(f.podsAtKill), "pods-at-kill")
		b.ReportMetric(f.toKill.Seconds(), "kill-at-s")
		b.ReportMetric(f.restartReady.Seconds(), "restart-ready-s")
		b.ReportMetric(f.toFinish.Seconds(), "finish-after-kill-s")
	}
}

// crashBuild runs the scenario: a server on a fixed port (so that the simulated agent
// finds its restart), nodes nodes, RCs of envelope sizes for pods pods in several
// namespaces, a client pool writing pods, services and secrets meanwhile; kill -9 when
// the watch has seen half of the pods, restart on the same data and port, and wait
// until the build is done; then check the acknowledged writes, the RCs' pods and the
// bindings.
func crashBuild(t testing.TB, nodes, pods int) crashFigures {
	t.Helper()
	ctx := context.Background()
	_, port, err := net.SplitHostPort(freeLoopbackAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"--insecure-port", port, "--dns-port", "0"}
	dataDir := t.TempDir()
	s := StartServer(t, dataDir, flags...)
	startAgent(t, s, "--simulate", strconv.Itoa(nodes), "--node-status-update-frequency", "10s", "--stats-interval", "0")
	cs := clientset(t, s)
	waitNodesReady(t, cs, nodes)
	for n := range crashBuildNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("crash-%d", n)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := watchPodHistory(t, s.URL)

	start := time.Now()
	pool := startWritePool(s.URL, 8, 200)
	sizes := envelopeSizes(pods)
	replicas := map[string]int{} // namespace/RC name -> replicas
	var rcAcks []ackedWrite
	for j, size := range sizes {
		ns, name := fmt.Sprintf("crash-%d", j%crashBuildNamespaces), fmt.Sprintf("rc%d", j)
		rc, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, envelopeRC(name, size), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		replicas[ns+"/"+name] = size
		rcAcks = append(rcAcks, ackedWrite{resource: "replicationcontrollers", namespace: ns, name: name, rv: parseRV(rc.ResourceVersion)})
	}

	poll.Until(t, 30*time.Minute, "half of the pods created", func() error {
		if err := w.failure(); err != nil {
			t.Fatalf("pod watch: %v", err)
		}
		if seen, bound := w.counts(); seen < pods/2 || bound == 0 {
			return fmt.Errorf("%d of %d pods seen, %d bound", seen, pods, bound)
		}
		return nil
	})
	s.Kill()
	var f crashFigures
	killed := time.Now()
	f.toKill = killed.Sub(start)
	f.podsAtKill, f.boundAt = w.counts()
	acks := append(pool.stop(), rcAcks...)
	f.rcs, f.acked = len(sizes), len(acks)-len(rcAcks)

	s2, err := launch(t, "server", dataDir, flags...)
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, 5*time.Minute, "restarted server ready", func() error { return readyz(s2.URL) })
	f.restartReady = time.Since(killed)

	directPods := 0
	for _, a := range acks {
		if a.resource == "pods" {
			directPods++
		}
	}
	poll.Until(t, 20*time.Minute, "every RC full and every pod bound", func() error {
		if err := w.failure(); err != nil {
			t.Fatalf("pod watch: %v", err)
		}
		return w.done(replicas, directPods)
	})
	f.toFinish = time.Since(killed)
	f.resumes = w.resumeCount()
	if err := w.failure(); err != nil {
		t.Fatalf("pod watch: %v", err)
	}

	// The agent found the restarted server: every node heartbeats to it.
	cs2 := clientset(t, s2)
	Eventually(t, 2*time.Minute, "every node's heartbeat after the restart", func() error {
		list, err := cs2.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		stale := 0
		for _, n := range list.Items {
			fresh := false
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(killed.Add(time.Second)) {
					fresh = true
				}
			}
			if !fresh {
				stale++
			}
		}
		if stale > 0 || len(list.Items) != nodes {
			return fmt.Errorf("%d of %d nodes without a Ready heartbeat since the kill", stale, len(list.Items))
		}
		return nil
	})
	checkAcknowledged(t, s2.URL, acks)
	stored := checkBuild(t, s2, replicas)
	w.check(t, replicas, stored)
	return f
}

// ackedWrite is a create the server answered with 2xx.
type ackedWrite struct {
	resource, namespace, name string
	rv                        int64
}

func parseRV(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// writePool is clients creating pods, services and secrets in the crash namespaces
// while the RCs build, recording every create answered with 2xx.
type writePool struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	acked  []ackedWrite
}

// startWritePool starts clients writers sharing rate creates a second.
func startWritePool(base string, clients, rate int) *writePool {
	ctx, cancel := context.WithCancel(context.Background())
	p := &writePool{cancel: cancel}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	client := &http.Client{Timeout: 30 * time.Second}
	var next struct {
		sync.Mutex
		i int
	}
	for range clients {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				next.Lock()
				i := next.i
				next.i++
				next.Unlock()
				a, body := directObject(i)
				resp, err := client.Post(fmt.Sprintf("%s/api/v1/namespaces/%s/%s", base, a.namespace, a.resource), "application/json", bytes.NewReader(body))
				if err != nil {
					continue // the server is gone (or going): not acknowledged
				}
				var got struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				}
				derr := json.NewDecoder(resp.Body).Decode(&got)
				resp.Body.Close()
				if resp.StatusCode/100 != 2 || derr != nil {
					continue
				}
				a.rv = parseRV(got.Metadata.ResourceVersion)
				p.mu.Lock()
				p.acked = append(p.acked, a)
				p.mu.Unlock()
			}
		}()
	}
	go func() { <-ctx.Done(); tick.Stop() }()
	return p
}

// stop ends the clients and returns the acknowledged creates.
func (p *writePool) stop() []ackedWrite {
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ackedWrite(nil), p.acked...)
}

// directObject is the i-th direct write: a pod, a service or a secret (the API of
// Kubernetes 1.0 has no configmaps), in turn, spread over the namespaces.
func directObject(i int) (ackedWrite, []byte) {
	ns := fmt.Sprintf("crash-%d", i%crashBuildNamespaces)
	name := fmt.Sprintf("direct-%d", i)
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{"direct": "crash"}}
	var obj any
	var resource string
	switch i % 3 {
	case 0:
		resource = "pods"
		obj = &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: meta,
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}
	case 1:
		resource = "services"
		obj = &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta,
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	default:
		resource = "secrets"
		obj = &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta,
			Data: map[string][]byte{"k": []byte(name)}}
	}
	body, _ := json.Marshal(obj)
	return ackedWrite{resource: resource, namespace: ns, name: name}, body
}

// checkAcknowledged checks that every acknowledged create is stored, at its
// acknowledged resourceVersion or later.
func checkAcknowledged(t testing.TB, base string, acks []ackedWrite) {
	t.Helper()
	stored := map[string]map[string]int64{} // resource -> namespace/name -> resourceVersion
	for _, resource := range []string{"pods", "services", "secrets", "replicationcontrollers"} {
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := getJSON(base+"/api/v1/"+resource, &list); err != nil {
			t.Fatalf("list %s: %v", resource, err)
		}
		stored[resource] = map[string]int64{}
		for _, it := range list.Items {
			stored[resource][it.Metadata.Namespace+"/"+it.Metadata.Name] = parseRV(it.Metadata.ResourceVersion)
		}
	}
	lost := 0
	for _, a := range acks {
		rv, ok := stored[a.resource][a.namespace+"/"+a.name]
		switch {
		case !ok:
			lost++
			if lost <= 20 {
				t.Errorf("acknowledged %s %s/%s (resourceVersion %d) lost", a.resource, a.namespace, a.name, a.rv)
			}
		case rv < a.rv:
			t.Errorf("%s %s/%s: resourceVersion %d after the restart, %d when acknowledged", a.resource, a.namespace, a.name, rv, a.rv)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged creates lost", lost, len(acks))
	}
}

// checkBuild checks the state after the restart: every RC has exactly spec.replicas
// active pods (and says so in its status), every pod is bound to a node that exists.
func checkBuild(t testing.TB, s *Server, replicas map[string]int) []corev1.Pod {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t, s)
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	for _, n := range nodes.Items {
		exists[n.Name] = true
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	active := map[string]int{}
	unbound := 0
	for _, p := range pods.Items {
		if !exists[p.Spec.NodeName] {
			unbound++
			if unbound <= 20 {
				t.Errorf("pod %s/%s is bound to %q, not a node that exists", p.Namespace, p.Name, p.Spec.NodeName)
			}
		}
		if app := p.Labels["app"]; app != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			active[p.Namespace+"/"+app]++
		}
	}
	if unbound > 0 {
		t.Errorf("%d of %d pods not bound to a node that exists", unbound, len(pods.Items))
	}
	refuseSecondBinding(t, cs, pods.Items, nodes.Items)
	for key, want := range replicas {
		if active[key] != want {
			t.Errorf("RC %s: %d active pods, want %d", key, active[key], want)
		}
	}
	rcs, err := cs.CoreV1().ReplicationControllers("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs.Items {
		if want := replicas[rc.Namespace+"/"+rc.Name]; int(rc.Status.Replicas) != want {
			t.Errorf("RC %s/%s: status.replicas %d, want %d", rc.Namespace, rc.Name, rc.Status.Replicas, want)
		}
	}
	return pods.Items
}

// refuseSecondBinding asks to bind a few bound pods (one in every 1,000) to another
// node: the binding path must answer 409 Conflict and leave the pod where it is.
func refuseSecondBinding(t testing.TB, cs *kubernetes.Clientset, pods []corev1.Pod, nodes []corev1.Node) {
	t.Helper()
	ctx := context.Background()
	if len(nodes) < 2 {
		return
	}
	tried := 0
	for i := 0; i < len(pods); i += 1000 {
		p := pods[i]
		if p.Spec.NodeName == "" {
			continue
		}
		other := nodes[0].Name
		if other == p.Spec.NodeName {
			other = nodes[1].Name
		}
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: other}}
		err := cs.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{})
		if !apierrors.IsConflict(err) {
			t.Errorf("binding pod %s/%s (on %s) to %s again: %v, want 409 Conflict", p.Namespace, p.Name, p.Spec.NodeName, other, err)
		}
		got, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.NodeName != p.Spec.NodeName {
			t.Errorf("pod %s/%s moved from %s to %s by a second binding", p.Namespace, p.Name, p.Spec.NodeName, got.Spec.NodeName)
		}
		tried++
	}
	if tried == 0 {
		t.Errorf("no bound pod to try a second binding on")
	}
}

// podHistory is a watch of every pod, from before the RCs exist, resumed from the
// last resourceVersion it saw whenever its connection ends (the kill): what every
// pod was created as and bound to, over the whole build.
type podHistory struct {
	base string

	mu       sync.Mutex
	conn     *rawClient
	closed   bool
	lastRV   string
	resumes  int
	err      error
	pods     map[string]*podRecord // UID -> record
	added    map[string]int        // namespace/app -> ADDED events
	bound    int                   // pods ever bound
	live     map[string]int        // namespace/app -> pods not deleted ("": direct pods)
	liveOn   map[string]int        // namespace/app -> pods not deleted and bound
	rebinds  []string              // a pod's nodeName changed: what and when
	replayed int                   // ADDED events for a UID already seen
}

type podRecord struct {
	key, name string // key: namespace/app label ("" for a direct pod's app)
	node      string
	deleted   bool
}

// podEvent is the part of a watch event of a pod that the history reads.
type podEvent struct {
	Type   string `json:"type"`
	Object struct {
		Kind     string `json:"kind"`
		Code     int    `json:"code"`
		Message  string `json:"message"`
		Metadata struct {
			Name            string            `json:"name"`
			Namespace       string            `json:"namespace"`
			UID             string            `json:"uid"`
			ResourceVersion string            `json:"resourceVersion"`
			Labels          map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	} `json:"object"`
}

// watchPodHistory starts the watch at the server's current resourceVersion; it is
// closed when the test ends.
func watchPodHistory(t testing.TB, base string) *podHistory {
	t.Helper()
	var meta struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := getJSON(base+"/api/v1/pods?limit=1", &meta); err != nil {
		t.Fatal(err)
	}
	h := &podHistory{base: base, lastRV: meta.Metadata.ResourceVersion, pods: map[string]*podRecord{}, added: map[string]int{}, live: map[string]int{}, liveOn: map[string]int{}}
	r, err := h.open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.mu.Lock()
		h.closed = true
		if h.conn != nil {
			h.conn.close()
		}
		h.mu.Unlock()
	})
	go h.follow(r)
	return h
}

// open starts a watch from the last resourceVersion seen.
func (h *podHistory) open() (*chunkLines, error) {
	c, err := dialRaw(h.base)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		c.close()
		return nil, errors.New("closed")
	}
	h.conn = c
	rv := h.lastRV
	h.mu.Unlock()
	r, err := c.watch("/api/v1/pods?watch=true&resourceVersion=" + rv)
	if err != nil {
		c.close()
		return nil, err
	}
	return r, nil
}

// follow reads events, and when the connection ends resumes the watch (for 10
// minutes at most: the server is being restarted).
func (h *podHistory) follow(r *chunkLines) {
	for {
		line, err := r.ReadSlice('\n')
		if err == nil {
			if h.apply(line) {
				continue
			}
			return
		}
		h.mu.Lock()
		closed := h.closed
		h.mu.Unlock()
		if closed {
			return
		}
		var openErr error
		if !poll.For(10*time.Minute, func() bool { r, openErr = h.open(); return openErr == nil }) {
			h.fail(fmt.Errorf("watch not resumed from resourceVersion %s: %w", h.lastResourceVersion(), openErr))
			return
		}
		h.mu.Lock()
		h.resumes++
		h.mu.Unlock()
	}
}

// apply records one event line; false means the watch cannot go on.
func (h *podHistory) apply(line []byte) bool {
	var ev podEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		h.fail(fmt.Errorf("watch event %q: %w", line, err))
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	m := ev.Object.Metadata
	switch ev.Type {
	case "ERROR":
		h.err = fmt.Errorf("watch error after resourceVersion %s: %d %s", h.lastRV, ev.Object.Code, ev.Object.Message)
		return false
	case "BOOKMARK":
		h.lastRV = m.ResourceVersion
		return true
	}
	h.lastRV = m.ResourceVersion
	rec := h.pods[m.UID]
	if rec == nil {
		rec = &podRecord{name: m.Namespace + "/" + m.Name}
		if app := m.Labels["app"]; app != "" {
			rec.key = m.Namespace + "/" + app
		}
		h.pods[m.UID] = rec
		h.live[rec.key]++
	} else if ev.Type == "ADDED" {
		h.replayed++
	}
	if ev.Type == "ADDED" && rec.key != "" {
		h.added[rec.key]++
	}
	if n := ev.Object.Spec.NodeName; n != "" {
		if rec.node != "" && rec.node != n {
			h.rebinds = append(h.rebinds, fmt.Sprintf("pod %s (uid %s) bound to %s, then to %s at resourceVersion %s", rec.name, m.UID, rec.node, n, m.ResourceVersion))
		}
		if rec.node == "" {
			rec.node = n
			h.bound++
			if !rec.deleted {
				h.liveOn[rec.key]++
			}
		}
	}
	if ev.Type == "DELETED" && !rec.deleted {
		rec.deleted = true
		h.live[rec.key]--
		if rec.node != "" {
			h.liveOn[rec.key]--
		}
	}
	return true
}

func (h *podHistory) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil && !h.closed {
		h.err = err
	}
}

func (h *podHistory) failure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *podHistory) lastResourceVersion() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastRV
}

func (h *podHistory) resumeCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.resumes
}

// counts is the pods seen and bound so far.
func (h *podHistory) counts() (seen, bound int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pods), h.bound
}

// done says what is missing until every RC has its replicas of live pods, bound,
// and the direct pods are bound.
func (h *podHistory) done(replicas map[string]int, directPods int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var short []string
	for key, want := range replicas {
		if h.live[key] < want || h.liveOn[key] < want {
			short = append(short, fmt.Sprintf("%s %d/%d bound of %d", key, h.liveOn[key], h.live[key], want))
		}
	}
	if direct := h.liveOn[""]; direct < directPods {
		short = append(short, fmt.Sprintf("direct pods: %d bound of at least %d", direct, directPods))
	}
	if len(short) > 0 {
		sort.Strings(short)
		return fmt.Errorf("%d unfinished: %s", len(short), strings.Join(short[:min(5, len(short))], "; "))
	}
	return nil
}

// check checks the history: no pod's binding ever changed, no event was replayed
// across the resume, every RC created exactly its replicas of pods (none deleted),
// and the history ends where the store is: the same pods on the same nodes.
func (h *podHistory) check(t testing.TB, replicas map[string]int, stored []corev1.Pod) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	live := 0
	for _, p := range h.pods {
		if !p.deleted {
			live++
		}
	}
	if live != len(stored) {
		t.Errorf("the watch's history ends with %d pods, the store lists %d", live, len(stored))
	}
	differ := 0
	for _, p := range stored {
		rec := h.pods[string(p.UID)]
		if differ == 20 {
			t.Errorf("... and more pods where the store and the history differ")
			break
		}
		switch {
		case rec == nil || rec.deleted:
			differ++
			t.Errorf("pod %s/%s (uid %s) is stored but the watch's history does not have it", p.Namespace, p.Name, p.UID)
		case rec.node != p.Spec.NodeName:
			differ++
			t.Errorf("pod %s/%s is stored on %s, the watch's history has it on %s", p.Namespace, p.Name, p.Spec.NodeName, rec.node)
		}
	}
	for i, r := range h.rebinds {
		if i == 20 {
			t.Errorf("... %d rebinds in all", len(h.rebinds))
			break
		}
		t.Errorf("bound twice: %s", r)
	}
	if h.replayed > 0 {
		t.Errorf("the resumed watch sent ADDED again for %d pods already seen", h.replayed)
	}
	created, deleted := map[string]int{}, map[string]int{}
	for _, p := range h.pods {
		if p.key == "" {
			continue
		}
		created[p.key]++
		if p.deleted {
			deleted[p.key]++
		}
	}
	for key, want := range replicas {
		if created[key] != want || h.added[key] != want {
			t.Errorf("RC %s: %d pods created (%d ADDED events, %d deleted), want exactly %d", key, created[key], h.added[key], deleted[key], want)
		}
	}
}
