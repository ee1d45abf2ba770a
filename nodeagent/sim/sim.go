package sim

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
	"github.com/kubeactor/kubeactor/nodeagent/metrics"
	"github.com/kubeactor/kubeactor/nodeagent/nodestatus"
)

// Config is what a simulator runs.
type Config struct {
	Nodes           int           // how many nodes, named NodeName(NamePrefix, i)
	NamePrefix      string        // "sim"
	StatusFrequency time.Duration // each node's heartbeat period
	Capacity        corev1.ResourceList
	KubeletVersion  string         // reported as kubeletVersion and kubeProxyVersion
	Workers         int            // concurrent API writers (heartbeats and pods)
	StatsEvery      time.Duration  // how often to log counters; 0 for never
	Metrics         *metrics.Agent // the agent's metrics; nil measures nothing
	// DaemonPort is the port of the simulator's server (StatsHandler) the nodes
	// report; 0 when it serves none.
	DaemonPort int32
	// Beats is the client of the heartbeats, nil for the pods' own. Each kubelet
	// posts its status through a client (and a rate limit) of its own; behind one
	// limit shared with the pods' status writes, 5,000 nodes' heartbeats (500 a
	// second) fall behind during a build and the nodes go NotReady.
	Beats *apiclient.Client
}

// Stats counts what a simulator did since it started.
type Stats struct {
	Registered      int64
	Heartbeats      int64
	HeartbeatErrors int64
	PodsStarted     int64
	PodsRejected    int64
	PodsRemoved     int64
	PodErrors       int64
}

// Simulator runs Config.Nodes simulated nodes against one API server.
type Simulator struct {
	cfg    Config
	client *apiclient.Client
	log    logrus.FieldLogger

	nodes   []*node
	byName  map[string]*node
	byIP    map[string]*node
	started time.Time
	queue   workqueue.TypedRateLimitingInterface[string] // pods to look at again (namespace/name)
	// beats holds the nodes whose heartbeat is due. Heartbeats have writers of their
	// own: behind the pods' queue they would wait for whatever pod work is queued,
	// and after a restart of the server the watch hands over every bound pod at once
	// (130,000 in the envelope), long enough for every node to miss its grace period
	// and be evicted. A kubelet, too, posts its status apart from its pod workers.
	beats workqueue.TypedInterface[string]
	pods  cache.SharedIndexInformer
	// watched is the pods' cache once the watch started, for the metrics' goroutine.
	watched atomic.Pointer[cache.Store]

	registered, heartbeats, heartbeatErrors           atomic.Int64
	podsStarted, podsRejected, podsRemoved, podErrors atomic.Int64
}

// node is the state of one simulated node; mu guards obj and pool.
type node struct {
	index   int
	info    nodestatus.Info
	maxPods int

	mu   sync.Mutex
	obj  *corev1.Node // as last stored
	pool *Pool
}

// New prepares a simulator; nothing happens until Run.
func New(cfg Config, client *apiclient.Client, log logrus.FieldLogger) (*Simulator, error) {
	if cfg.Nodes < 1 || cfg.Nodes > MaxNodes {
		return nil, fmt.Errorf("simulate %d nodes: want 1..%d", cfg.Nodes, MaxNodes)
	}
	if cfg.StatusFrequency <= 0 {
		return nil, fmt.Errorf("node status update frequency %s: must be positive", cfg.StatusFrequency)
	}
	cfg.Workers = max(cfg.Workers, 1)
	maxPods := int(cfg.Capacity.Pods().Value())
	s := &Simulator{
		cfg:     cfg,
		client:  client,
		log:     log,
		nodes:   make([]*node, cfg.Nodes),
		byName:  make(map[string]*node, cfg.Nodes),
		byIP:    make(map[string]*node, cfg.Nodes),
		started: time.Now(),
	}
	cfg.Metrics.CountRunning(s.running)
	system := corev1.NodeSystemInfo{
		KernelVersion:           "simulated",
		OSImage:                 "kubeactor simulated node",
		ContainerRuntimeVersion: RuntimeVersion,
		KubeletVersion:          cfg.KubeletVersion,
		KubeProxyVersion:        cfg.KubeletVersion,
		OperatingSystem:         "linux",
		Architecture:            runtime.GOARCH,
	}
	for i := range s.nodes {
		name := NodeName(cfg.NamePrefix, i)
		ip, err := NodeIP(i)
		if err != nil {
			return nil, err
		}
		cidr, err := DerivedPodCIDR(i)
		if err != nil {
			return nil, err
		}
		n := &node{index: i, maxPods: maxPods, info: nodestatus.Info{
			Name: name, InternalIP: ip.String(), Hostname: name, PodCIDR: cidr,
			Capacity: cfg.Capacity, System: system, DaemonPort: cfg.DaemonPort,
		}}
		n.info.System.MachineID = name
		n.info.System.SystemUUID = name
		s.nodes[i] = n
		s.byName[name] = n
		s.byIP[n.info.InternalIP] = n
	}
	return s, nil
}

// Stats returns the counters so far.
func (s *Simulator) Stats() Stats {
	return Stats{
		Registered: s.registered.Load(), Heartbeats: s.heartbeats.Load(), HeartbeatErrors: s.heartbeatErrors.Load(),
		PodsStarted: s.podsStarted.Load(), PodsRejected: s.podsRejected.Load(), PodsRemoved: s.podsRemoved.Load(),
		PodErrors: s.podErrors.Load(),
	}
}

// Run registers the nodes, then serves them until ctx ends: heartbeats on the
// stagger schedule and the pods bound to them through one shared watch. The end of
// ctx is a normal stop, not an error.
func (s *Simulator) Run(ctx context.Context) error {
	began := time.Now()
	s.registerAll(ctx)
	if ctx.Err() != nil { // stopped while registering
		s.log.WithFields(statsFields(s.Stats())).Info("stopped")
		return nil
	}
	s.log.WithFields(logrus.Fields{"nodes": len(s.nodes), "took": time.Since(began).Round(time.Millisecond)}).Info("nodes registered")

	s.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	s.beats = workqueue.NewTyped[string]()
	s.pods = s.client.PodInformer(apiclient.BoundToAnyNode(), 0)
	if err := s.pods.AddIndexers(cache.Indexers{podsByNode: indexByNode}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	store := s.pods.GetStore()
	s.watched.Store(&store)
	reg, err := s.pods.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, _ bool) { s.podSeen(obj) },
		UpdateFunc: func(_, obj any) { s.podSeen(obj) },
		DeleteFunc: s.podGone,
	})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { s.pods.Run(ctx.Done()) })
	// Pods found running are reserved their IPs before any new pod gets one.
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) { // only when stopped
		s.queue.ShutDown()
		s.beats.ShutDown()
		wg.Wait()
		s.log.WithFields(statsFields(s.Stats())).Info("stopped")
		return nil
	}
	_, podWorkers := splitWorkers(s.cfg.Workers)
	beaters := HeartbeatWriters(len(s.nodes), s.cfg.Workers, s.cfg.StatusFrequency)
	for range podWorkers {
		wg.Go(func() { s.work(ctx) })
	}
	for range beaters {
		wg.Go(func() { s.beat(ctx) })
	}
	wg.Go(func() { s.heartbeatLoop(ctx) })
	if s.cfg.StatsEvery > 0 {
		wg.Go(func() { s.statsLoop(ctx) })
	}
	s.log.WithFields(logrus.Fields{"nodes": len(s.nodes), "status-frequency": s.cfg.StatusFrequency, "workers": s.cfg.Workers,
		"heartbeat-writers": beaters}).Info("simulating")

	<-ctx.Done()
	s.queue.ShutDown()
	s.beats.ShutDown()
	wg.Wait()
	s.log.WithFields(statsFields(s.Stats())).Info("stopped")
	return nil
}

// registerAll registers every node, Workers at a time, retrying each until it
// succeeds or ctx ends.
func (s *Simulator) registerAll(ctx context.Context) {
	next := make(chan *node)
	var wg sync.WaitGroup
	for range min(s.cfg.Workers, len(s.nodes)) {
		wg.Go(func() {
			for n := range next {
				s.registerRetrying(ctx, n)
			}
		})
	}
	for _, n := range s.nodes {
		select {
		case next <- n:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
}

func (s *Simulator) registerRetrying(ctx context.Context, n *node) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.register(ctx, n)
		if err == nil {
			return
		}
		s.log.WithError(err).WithField("node", n.info.Name).Warn("register node failed; retrying")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// register creates (or takes back) n's Node and sets its pod IP pool from the
// node's spec.podCIDR, or the derived CIDR when the node has none.
func (s *Simulator) register(ctx context.Context, n *node) error {
	obj, err := s.client.RegisterNode(ctx, nodestatus.Registration(n.info, time.Now()))
	if err != nil {
		return err
	}
	cidr := obj.Spec.PodCIDR
	if cidr == "" {
		cidr = n.info.PodCIDR
	}
	pool, err := NewPool(cidr)
	if err != nil {
		s.log.WithError(err).WithFields(logrus.Fields{"node": n.info.Name, "cidr": cidr}).Warn("unusable pod CIDR; using the derived one")
		if pool, err = NewPool(n.info.PodCIDR); err != nil {
			return fmt.Errorf("node %s: %w", n.info.Name, err)
		}
	}
	n.mu.Lock()
	n.obj = obj
	if n.pool == nil || n.pool.CIDR() != pool.CIDR() {
		n.pool = pool
	}
	n.mu.Unlock()
	s.registered.Add(1)
	return nil
}

// heartbeatLoop queues each node's heartbeat on the stagger schedule. One goroutine
// serves every node; it wakes at most every 10ms and queues all that are due.
func (s *Simulator) heartbeatLoop(ctx context.Context) {
	const tick = 10 * time.Millisecond
	sched := Stagger{Period: s.cfg.StatusFrequency, N: len(s.nodes)}
	start := time.Now()
	var c Cursor
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		var due []int
		due, c = sched.Due(c, time.Since(start))
		for _, i := range due {
			s.beats.Add(s.nodes[i].info.Name)
		}
		timer.Reset(max(sched.At(c)-time.Since(start), tick))
	}
}

func (s *Simulator) statsLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.StatsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.log.WithFields(statsFields(s.Stats())).WithField("queue", s.queue.Len()).Info("stats")
		}
	}
}

func statsFields(st Stats) logrus.Fields {
	return logrus.Fields{
		"registered": st.Registered, "heartbeats": st.Heartbeats, "heartbeat-errors": st.HeartbeatErrors,
		"pods-started": st.PodsStarted, "pods-rejected": st.PodsRejected, "pods-removed": st.PodsRemoved, "pod-errors": st.PodErrors,
	}
}

// splitWorkers divides the writers between heartbeats and pods: a quarter (at
// least one) post heartbeats, the rest (at least one) sync pods.
func splitWorkers(workers int) (beaters, pods int) {
	beaters = max(workers/4, 1)
	return beaters, max(workers-beaters, 1)
}

// beatLatency is the heartbeat round trip the heartbeat writers are sized for: with
// HeartbeatWriters writers, heartbeats keep to their period as long as the server
// answers them within this on average.
const beatLatency = 500 * time.Millisecond

// HeartbeatWriters is how many concurrent heartbeat writers a simulator of nodes nodes
// with workers writers runs: a quarter of the workers, or enough for every node to
// post its status each period while a heartbeat takes beatLatency, whichever is
// more. Eight writers at 5,000 nodes every 10 s (500 a second) would need the server
// to answer each in 16 ms, which a server busy with a build of 150,000 pods does not.
func HeartbeatWriters(nodes, workers int, period time.Duration) int {
	beaters, _ := splitWorkers(workers)
	if period <= 0 {
		return beaters
	}
	need := (int64(nodes)*int64(beatLatency) + int64(period) - 1) / int64(period)
	return max(beaters, int(min(need, int64(nodes))))
}

// work syncs pods until the queue shuts down; a failed sync is retried with backoff.
func (s *Simulator) work(ctx context.Context) {
	for {
		key, shutdown := s.queue.Get()
		if shutdown {
			return
		}
		switch err := s.syncPod(ctx, key); {
		case err == nil || ctx.Err() != nil:
			s.queue.Forget(key)
		default:
			s.podErrors.Add(1)
			s.queue.AddRateLimited(key)
			s.log.WithError(err).WithField("pod", key).Debug("pod sync failed; retrying")
		}
		s.queue.Done(key)
	}
}

// beat posts the heartbeats that are due until the queue shuts down; a failed one
// waits for the node's next turn.
func (s *Simulator) beat(ctx context.Context) {
	for {
		name, shutdown := s.beats.Get()
		if shutdown {
			return
		}
		if err := s.heartbeat(ctx, s.byName[name]); err != nil && ctx.Err() == nil {
			s.heartbeatErrors.Add(1)
			s.log.WithError(err).WithField("node", name).Debug("heartbeat failed")
		}
		s.beats.Done(name)
	}
}

// heartbeat posts n's status. A node deleted behind our back registers again, as a
// restarted kubelet would.
func (s *Simulator) heartbeat(ctx context.Context, n *node) error {
	n.mu.Lock()
	obj := n.obj
	n.mu.Unlock()
	client := s.client
	if s.cfg.Beats != nil {
		client = s.cfg.Beats
	}
	updated, err := client.UpdateNodeStatus(ctx, obj, func(cur *corev1.Node) corev1.NodeStatus {
		return nodestatus.Status(cur.Status, n.info, time.Now())
	})
	if apierrors.IsNotFound(err) {
		s.log.WithField("node", n.info.Name).Warn("node deleted; registering again")
		return s.register(ctx, n)
	}
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.obj = updated
	n.mu.Unlock()
	s.heartbeats.Add(1)
	return nil
}

// podSeen handles a pod added or changed in the watch: it reserves the IP of a pod
// found running on one of our nodes and queues pods that need work.
func (s *Simulator) podSeen(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n := s.byName[pod.Spec.NodeName]
	if n == nil {
		return
	}
	if pod.Status.PodIP != "" && pod.Status.Phase == corev1.PodRunning {
		if ip, err := netip.ParseAddr(pod.Status.PodIP); err == nil {
			n.mu.Lock()
			if n.pool != nil {
				n.pool.Reserve(string(pod.UID), ip)
			}
			n.mu.Unlock()
		}
	}
	if Decide(pod) != Leave {
		key, err := cache.MetaNamespaceKeyFunc(pod)
		if err == nil {
			s.queue.Add(key)
		}
	}
}

// podGone releases the IP of a pod that was deleted.
func (s *Simulator) podGone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if n := s.byName[pod.Spec.NodeName]; n != nil {
		n.release(pod)
	}
}

// syncPod looks at the pod of key again and acts on it.
func (s *Simulator) syncPod(ctx context.Context, key string) error {
	obj, exists, err := s.pods.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	n := s.byName[pod.Spec.NodeName]
	if n == nil {
		return nil
	}
	switch Decide(pod) {
	case Start:
		return s.start(ctx, n, pod)
	case Remove:
		if err := s.client.DeletePod(ctx, pod.Namespace, pod.Name, pod.UID); err != nil {
			return err
		}
		n.release(pod)
		s.podsRemoved.Add(1)
	}
	return nil
}

// start gives pod an IP and reports it Running, or reports it Failed when the node
// already runs its maximum of pods.
func (s *Simulator) start(ctx context.Context, n *node, pod *corev1.Pod) error {
	ip, admitted, err := n.admit(pod)
	if err != nil {
		return err
	}
	hostIP := n.info.InternalIP
	_, err = s.client.UpdatePodStatus(ctx, pod, func(cur *corev1.Pod) (corev1.PodStatus, bool) {
		if Decide(cur) != Start {
			return corev1.PodStatus{}, false
		}
		if !admitted {
			return RejectedStatus(cur, "OutOfpods", "Pod cannot be started due to exceeded capacity", time.Now()), true
		}
		return RunningStatus(cur, hostIP, ip, time.Now()), true
	})
	if apierrors.IsNotFound(err) {
		n.release(pod)
		return nil
	}
	if err != nil {
		return err
	}
	if admitted {
		s.podsStarted.Add(1)
		s.cfg.Metrics.PodStarted(time.Since(pod.CreationTimestamp.Time))
	} else {
		s.podsRejected.Add(1)
	}
	return nil
}

// running counts the pods the simulated nodes run (those holding an IP) and their
// containers, from the watch's cache (for the metrics, at scrape time).
func (s *Simulator) running() (pods, containers int) {
	store := s.watched.Load()
	if store == nil { // not watching yet
		return 0, 0
	}
	for _, obj := range (*store).List() {
		pod, ok := obj.(*corev1.Pod)
		if !ok || s.byName[pod.Spec.NodeName] == nil || pod.Status.Phase != corev1.PodRunning {
			continue
		}
		pods++
		containers += len(pod.Spec.Containers)
	}
	return pods, containers
}

// admit gives pod its IP, unless the node already runs maxPods pods.
func (n *node) admit(pod *corev1.Pod) (ip string, admitted bool, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := string(pod.UID)
	if n.pool.Len() >= n.maxPods {
		if a, ok := n.pool.Lookup(key); ok {
			return a.String(), true, nil
		}
		return "", false, nil
	}
	a, err := n.pool.Allocate(key)
	if errors.Is(err, ErrPoolFull) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return a.String(), true, nil
}

func (n *node) release(pod *corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pool != nil {
		n.pool.Release(string(pod.UID))
	}
}
