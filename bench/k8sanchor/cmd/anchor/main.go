// Command anchor measures the real Kubernetes control plane (kube-apiserver and
// kube-scheduler of v1.32 against one etcd member) on the workloads of kubeactor's
// benchmarks, so docs/benchmarks.md can show both side by side from one run (issue 18):
//
//   - creates: 64 clients post JSON pods (marshalled per request, Go net/http), no
//     scheduler running; the figure is creates/s.
//   - schedule: kube-scheduler runs; 5,000 Ready nodes are created, then 30,000 pods
//     with CPU and memory requests, and the figure is pods/s from the first create until
//     a watch has seen every pod bound, with the spread (max - min pods per node).
//
// Each workload gets a fresh etcd data dir and a fresh apiserver. It prints one JSON
// object of figures on stdout; the processes' logs go to files under -work.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const token = "anchor-bench-token"

type config struct {
	bin, etcd, work string
	creates         int
	clients         int
	nodes, pods     int
	schedQPS        int
	skipCreates     bool
	skipSchedule    bool
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin", "directory holding kube-apiserver and kube-scheduler")
	flag.StringVar(&c.etcd, "etcd", "etcd", "the etcd binary")
	flag.StringVar(&c.work, "work", "", "work directory for data and logs (default: a new temp dir)")
	flag.IntVar(&c.creates, "creates", 20000, "pods posted in the create workload")
	flag.IntVar(&c.clients, "clients", 64, "concurrent clients")
	flag.IntVar(&c.nodes, "nodes", 5000, "Ready nodes in the schedule workload")
	flag.IntVar(&c.pods, "pods", 30000, "pods in the schedule workload")
	flag.IntVar(&c.schedQPS, "scheduler-qps", 5000, "kube-scheduler's client QPS and burst (its default of 50 would cap bindings at 50/s)")
	flag.BoolVar(&c.skipCreates, "skip-creates", false, "skip the create workload")
	flag.BoolVar(&c.skipSchedule, "skip-schedule", false, "skip the schedule workload")
	flag.Parse()
	log.SetFlags(log.Ltime)
	log.SetOutput(os.Stderr)
	if c.work == "" {
		d, err := os.MkdirTemp("", "k8sanchor-")
		if err != nil {
			log.Fatal(err)
		}
		c.work = d
	}
	bin, err := filepath.Abs(c.bin)
	if err != nil {
		log.Fatal(err)
	}
	c.bin = bin
	out := map[string]any{"kubernetes": "v1.32.13", "clients": c.clients}
	if v, err := exec.Command(c.etcd, "--version").Output(); err == nil {
		out["etcd"] = strings.TrimPrefix(strings.SplitN(string(v), "\n", 2)[0], "etcd Version: ")
	}
	if !c.skipCreates {
		r, err := runCreates(c)
		if err != nil {
			log.Fatalf("creates: %v", err)
		}
		out["creates"] = r
	}
	if !c.skipSchedule {
		r, err := runSchedule(c)
		if err != nil {
			log.Fatalf("schedule: %v", err)
		}
		out["schedule"] = r
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		log.Fatal(err)
	}
}

// cluster is one etcd member and one kube-apiserver, and optionally kube-scheduler.
type cluster struct {
	dir   string
	url   string
	procs []*exec.Cmd
	hc    *http.Client
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (k *cluster) start(name, logName string, args ...string) error {
	f, err := os.Create(filepath.Join(k.dir, logName))
	if err != nil {
		return err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group, so that stopping the driver's children never signals
	// anything else, and a dying driver's children are ended by stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	k.procs = append(k.procs, cmd)
	return nil
}

func (k *cluster) stop() {
	for i := len(k.procs) - 1; i >= 0; i-- {
		p := k.procs[i]
		_ = p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	k.procs = nil
}

// startCluster starts etcd on loopback with a fresh data dir, then kube-apiserver
// against it with a self-signed serving cert, a token file and AlwaysAllow.
func startCluster(c config, name string) (*cluster, error) {
	dir := filepath.Join(c.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	k := &cluster{dir: dir}
	cport, err := freePort()
	if err != nil {
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		return nil, err
	}
	curl := fmt.Sprintf("http://127.0.0.1:%d", cport)
	purl := fmt.Sprintf("http://127.0.0.1:%d", pport)
	if err := k.start(c.etcd, "etcd.log",
		"--name", "anchor", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", curl, "--advertise-client-urls", curl,
		"--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		"--initial-cluster", "anchor="+purl, "--quota-backend-bytes", fmt.Sprint(8<<30),
	); err != nil {
		return nil, err
	}
	if err := poll(30*time.Second, func() error {
		resp, err := http.Get(curl + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}); err != nil {
		k.stop()
		return nil, fmt.Errorf("etcd: %w (see %s)", err, filepath.Join(dir, "etcd.log"))
	}

	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	k.url = fmt.Sprintf("https://127.0.0.1:%d", port)
	// Without kube-controller-manager there are no service accounts to admit pods
	// against and no controller to lift the not-ready taint TaintNodesByCondition puts
	// on new nodes, so those plugins are off, with the other defaults that have nothing
	// to do here; NamespaceLifecycle stays.
	disabled := []string{"ServiceAccount", "TaintNodesByCondition", "LimitRanger", "PodSecurity", "Priority",
		"DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
		"RuntimeClass", "CertificateApproval", "CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction",
		"DefaultIngressClass", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}
	if err := k.start(filepath.Join(c.bin, "kube-apiserver"), "kube-apiserver.log",
		"--etcd-servers", curl,
		"--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(port), "--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "AlwaysAllow",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/16",
		"--enable-admission-plugins", "NamespaceLifecycle",
		"--disable-admission-plugins", strings.Join(disabled, ","),
	); err != nil {
		k.stop()
		return nil, err
	}
	k.hc = &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		MaxIdleConnsPerHost: 4 * c.clients,
		MaxIdleConns:        4 * c.clients,
	}, Timeout: 5 * time.Minute}
	if err := poll(120*time.Second, func() error {
		resp, err := k.do("GET", "/readyz", nil)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("readyz %d: %.200s", resp.StatusCode, b)
		}
		return nil
	}); err != nil {
		k.stop()
		return nil, fmt.Errorf("kube-apiserver: %w (see %s)", err, filepath.Join(dir, "kube-apiserver.log"))
	}
	// The default namespace is made by the apiserver's own controller shortly after it
	// is ready; pods posted before it would be refused.
	if err := poll(60*time.Second, func() error {
		resp, err := k.do("GET", "/api/v1/namespaces/default", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("namespace default: %d", resp.StatusCode)
		}
		return nil
	}); err != nil {
		k.stop()
		return nil, err
	}
	return k, nil
}

// startScheduler starts kube-scheduler against the apiserver, without leader election,
// with its client's QPS raised so that the client's rate limit is not what is measured.
func (k *cluster) startScheduler(c config) error {
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: anchor
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: anchor
  context: {cluster: anchor, user: admin}
current-context: anchor
`, k.url, token)
	kc := filepath.Join(k.dir, "scheduler.kubeconfig")
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: %d
  burst: %d
leaderElection:
  leaderElect: false
`, kc, c.schedQPS, c.schedQPS)
	cf := filepath.Join(k.dir, "scheduler.yaml")
	if err := os.WriteFile(cf, []byte(cfg), 0o600); err != nil {
		return err
	}
	return k.start(filepath.Join(c.bin, "kube-scheduler"), "kube-scheduler.log", "--config", cf, "--secure-port", "0")
}

func (k *cluster) do(method, path string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, k.url+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return k.hc.Do(req)
}

// post sends one JSON body and wants 201 Created.
func (k *cluster) post(path string, body []byte) error {
	resp, err := k.do("POST", path, body)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: %d %.300s", path, resp.StatusCode, b)
	}
	return nil
}

func poll(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("after %v: %w", timeout, err)
}

func benchPod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
			}}}}},
	}
}

// postAll posts n objects from c.clients goroutines, each body made by mk(i) and
// marshalled per request, and returns the rate and the latencies, sorted.
func (k *cluster) postAll(clients, n int, path string, mk func(i int) any) (float64, []time.Duration, error) {
	var next atomic.Int64
	var firstErr atomic.Value
	lats := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || firstErr.Load() != nil {
					return
				}
				body, err := json.Marshal(mk(i))
				if err == nil {
					t0 := time.Now()
					err = k.post(path, body)
					lats[w] = append(lats[w], time.Since(t0))
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if e := firstErr.Load(); e != nil {
		return 0, nil, e.(error)
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return float64(n) / elapsed.Seconds(), all, nil
}

func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(float64(len(sorted)-1)*p)].Microseconds()) / 1000
}

func runCreates(c config) (map[string]any, error) {
	k, err := startCluster(c, "creates")
	if err != nil {
		return nil, err
	}
	defer k.stop()
	log.Printf("creates: posting %d pods from %d clients, no scheduler", c.creates, c.clients)
	rate, lat, err := k.postAll(c.clients, c.creates, "/api/v1/namespaces/default/pods", func(i int) any {
		return benchPod(fmt.Sprintf("bench-%d", i))
	})
	if err != nil {
		return nil, err
	}
	log.Printf("creates: %.0f/s", rate)
	return map[string]any{"pods": c.creates, "creates_per_s": round(rate), "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99)}, nil
}

func round(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

func runSchedule(c config) (map[string]any, error) {
	k, err := startCluster(c, "schedule")
	if err != nil {
		return nil, err
	}
	defer k.stop()
	if err := k.startScheduler(c); err != nil {
		return nil, err
	}
	// Nodes may carry their status on create; with no kube-controller-manager nothing
	// marks them unreachable or taints them, so Ready set once stays.
	t0 := time.Now()
	_, _, err = k.postAll(c.clients, c.nodes, "/api/v1/nodes", func(i int) any {
		return readyNode(fmt.Sprintf("sim-%d", i))
	})
	if err != nil {
		return nil, err
	}
	ready, err := k.readyNodes()
	if err != nil {
		return nil, err
	}
	if ready != c.nodes {
		return nil, fmt.Errorf("%d Ready nodes, want %d", ready, c.nodes)
	}
	log.Printf("schedule: %d Ready nodes in %v", ready, time.Since(t0).Round(time.Millisecond))
	// As in kubeactor's benchmark the pods are behind a Service, so the scheduler's
	// default topology spreading applies to them.
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "bench"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	body, _ := json.Marshal(svc)
	if err := k.post("/api/v1/namespaces/default/services", body); err != nil {
		return nil, err
	}
	// The scheduler must have synced before the clock starts: one warm-up pod outside
	// the service is bound first, then removed at once (no kubelet would confirm a
	// graceful deletion).
	warm := benchPod("warmup")
	warm.Labels = map[string]string{"app": "warmup"}
	body, _ = json.Marshal(warm)
	if err := k.post("/api/v1/namespaces/default/pods", body); err != nil {
		return nil, err
	}
	if err := poll(180*time.Second, func() error {
		resp, err := k.do("GET", "/api/v1/namespaces/default/pods/warmup", nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var p corev1.Pod
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			return err
		}
		if p.Spec.NodeName == "" {
			return errors.New("the warm-up pod is not bound")
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("kube-scheduler: %w (see %s)", err, filepath.Join(k.dir, "kube-scheduler.log"))
	}
	resp, err := k.do("DELETE", "/api/v1/namespaces/default/pods/warmup?gracePeriodSeconds=0", nil)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("delete warm-up pod: %d", resp.StatusCode)
	}
	w, err := k.watchBindings(c.pods)
	if err != nil {
		return nil, err
	}
	log.Printf("schedule: posting %d pods from %d clients, kube-scheduler running", c.pods, c.clients)
	start := time.Now()
	crate, _, err := k.postAll(c.clients, c.pods, "/api/v1/namespaces/default/pods", func(i int) any {
		return benchPod(fmt.Sprintf("bench-%d", i))
	})
	if err != nil {
		return nil, err
	}
	log.Printf("schedule: created at %.0f/s; %d bound so far", crate, w.boundCount())
	select {
	case <-w.done:
	case <-time.After(20 * time.Minute):
		return nil, fmt.Errorf("only %d of %d pods bound after 20 minutes", w.boundCount(), c.pods)
	}
	elapsed := w.last().Sub(start)
	lat := w.latencies()
	spread, err := k.spread(c)
	if err != nil {
		return nil, err
	}
	rate := float64(c.pods) / elapsed.Seconds()
	log.Printf("schedule: %d pods bound in %v: %.0f pods/s, spread %d", c.pods, elapsed.Round(time.Millisecond), rate, spread)
	return map[string]any{
		"nodes": c.nodes, "pods": c.pods, "scheduler_qps": c.schedQPS,
		"pods_per_s": round(rate), "seconds": round(elapsed.Seconds()), "creates_per_s": round(crate),
		"p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99), "spread": spread,
	}, nil
}

func readyNode(name string) *corev1.Node {
	rl := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	now := metav1.Now()
	return &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Capacity: rl, Allocatable: rl,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}},
		},
	}
}

// readyNodes lists the nodes and counts those whose Ready condition is True and that
// carry no NoSchedule or NoExecute taint.
func (k *cluster) readyNodes() (int, error) {
	resp, err := k.do("GET", "/api/v1/nodes", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var list corev1.NodeList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return 0, err
	}
	ready := 0
	for _, n := range list.Items {
		ok := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ok = true
			}
		}
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				ok = false
			}
		}
		if ok {
			ready++
		}
	}
	return ready, nil
}

// spread lists the pods, checks every one is bound, and returns max - min pods per node.
func (k *cluster) spread(c config) (int, error) {
	resp, err := k.do("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dbench", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var list corev1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return 0, err
	}
	if len(list.Items) != c.pods {
		return 0, fmt.Errorf("%d pods stored, want %d", len(list.Items), c.pods)
	}
	per := map[string]int{}
	for _, p := range list.Items {
		if p.Spec.NodeName == "" {
			return 0, fmt.Errorf("pod %s is not bound in the store", p.Name)
		}
		per[p.Spec.NodeName]++
	}
	lo, hi := c.pods, 0
	for i := 0; i < c.nodes; i++ {
		n := per[fmt.Sprintf("sim-%d", i)]
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo, nil
}

// bindingWatch follows the pods of the default namespace and notes, per pod, when it
// was first seen and when it was first seen bound to a node.
type bindingWatch struct {
	mu        sync.Mutex
	created   map[string]time.Time
	bound     map[string]time.Time
	lastBound time.Time
	want      int
	done      chan struct{}
}

func (k *cluster) watchBindings(want int) (*bindingWatch, error) {
	resp, err := k.do("GET", "/api/v1/namespaces/default/pods?limit=1", nil)
	if err != nil {
		return nil, err
	}
	var meta struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	w := &bindingWatch{created: map[string]time.Time{}, bound: map[string]time.Time{}, want: want, done: make(chan struct{})}
	// The watch has its own client without the request timeout.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	open := func(rv string) (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(context.Background(), "GET",
			k.url+"/api/v1/namespaces/default/pods?watch=true&resourceVersion="+rv, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "application/json")
		wr, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if wr.StatusCode != 200 {
			wr.Body.Close()
			return nil, fmt.Errorf("watch: %d", wr.StatusCode)
		}
		return wr.Body, nil
	}
	rv := meta.Metadata.ResourceVersion
	body, err := open(rv)
	if err != nil {
		return nil, err
	}
	go func() {
		// The apiserver ends a watch now and then (its watch cache re-syncing with
		// etcd under load); like an informer, the watch resumes from the last
		// resourceVersion it saw, so no event is missed.
		for {
			rv = w.follow(body, rv)
			select {
			case <-w.done:
				return
			default:
			}
			if err := poll(60*time.Second, func() error {
				var err error
				body, err = open(rv)
				return err
			}); err != nil {
				log.Printf("watch: cannot resume from %s: %v", rv, err)
				return
			}
		}
	}()
	return w, nil
}

// follow reads one watch stream to its end and returns the last resourceVersion seen.
func (w *bindingWatch) follow(body io.ReadCloser, rv string) string {
	defer body.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(body, 1<<20))
	for {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name            string `json:"name"`
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
				Spec struct {
					NodeName string `json:"nodeName"`
				} `json:"spec"`
			} `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if w.boundCount() < w.want {
				log.Printf("watch ended (%v) at %d bound; resuming from %s", err, w.boundCount(), rv)
			}
			return rv
		}
		if ev.Type == "ERROR" {
			log.Printf("watch error event: %+v", ev.Object)
			continue
		}
		now := time.Now()
		if v := ev.Object.Metadata.ResourceVersion; v != "" {
			rv = v
		}
		name := ev.Object.Metadata.Name
		if name == "" {
			continue
		}
		w.mu.Lock()
		if _, ok := w.created[name]; !ok {
			w.created[name] = now
		}
		if _, ok := w.bound[name]; !ok && ev.Object.Spec.NodeName != "" {
			w.bound[name] = now
			w.lastBound = now
			if len(w.bound) == w.want {
				close(w.done)
			}
		}
		w.mu.Unlock()
	}
}

func (w *bindingWatch) boundCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bound)
}

func (w *bindingWatch) last() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastBound
}

func (w *bindingWatch) latencies() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]time.Duration, 0, len(w.bound))
	for name, t := range w.bound {
		out = append(out, t.Sub(w.created[name]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
