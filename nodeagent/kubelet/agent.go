package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
	"github.com/kubeactor/kubeactor/nodeagent/metrics"
	"github.com/kubeactor/kubeactor/nodeagent/nodestatus"
	"github.com/kubeactor/kubeactor/nodeagent/podnet"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
	"github.com/kubeactor/kubeactor/nodeagent/spans"
)

// Config is the agent's configuration (config.Agent, resolved).
type Config struct {
	NodeName            string
	NodeIP              string // reported InternalIP
	Hostname            string
	PauseImage          string
	RootDir             string // pod volumes live under RootDir/pods/<uid>
	SyncFrequency       time.Duration
	StatusFrequency     time.Duration
	MaxPods             int
	MaxDeadPerContainer int
	MaxDead             int
	ManifestPath        string
	FileCheckFrequency  time.Duration
	ClusterDNS          string
	ClusterDomain       string
	Network             string // Docker network of the infra containers; "" for the bridge
	DaemonPort          int32  // the agent server's port, reported in the node status
	Version             string // e.g. "v1.0.0-kubeactor"
	GCPeriod            time.Duration
	MinGCAge            time.Duration  // dead containers younger than this are kept
	NetworkPlugin       string         // "" (the engine's bridge) or NetworkBridge
	BridgeName          string         // the bridge of NetworkBridge
	ClusterCIDR         string         // pod traffic leaving it is masqueraded (NetworkBridge)
	NoRegister          bool           // --register-node=false: the node is not created by the agent
	ManifestURL         string         // static pods fetched from this URL
	HTTPCheckFrequency  time.Duration  // how often ManifestURL is fetched
	ImageGC             *ImageGCPolicy // nil: images are never removed
	Metrics             *metrics.Agent // the agent's metrics; nil measures nothing
	Tracer              *spans.Tracer  // traces pod syncs (tracing.go); nil traces nothing
}

// Agent is one Docker node.
type Agent struct {
	cfg Config
	api *apiclient.Client
	cs  kubernetes.Interface
	rt  runtime.Runtime
	log logrus.FieldLogger
	rec record.EventRecorder
	now func() time.Time

	services   cache.Store // every service, for the pods' environment
	inspected  sync.Map    // container id → runtime.Container as last inspected, while podsync.InspectionCurrent
	ownStarts  sync.Map    // container id → struct{}: started by a sync that observes it, so its start event is no news
	net        *podnet.Bridge
	podIPs     sync.Map             // infra container id → pod IP on the bridge
	learnedDNS atomic.Value         // string: the kube-dns cluster IP last used, for its log line
	engineRoot string               // the engine's data root, whose filesystem image collection watches
	imagesSeen map[string]imageSeen // by image id; owned by collectGarbage's goroutine

	mu       sync.Mutex
	workers  map[types.UID]*worker
	node     *corev1.Node
	podCIDR  string
	synced   bool                   // the pod informer has listed once: unknown containers are orphans
	mirrors  map[string]*corev1.Pod // mirror pods by namespace/name
	mirrorCh chan struct{}          // a mirror pod went away
}

// New builds an agent on rt, talking to the API server through api.
func New(cfg Config, api *apiclient.Client, rt runtime.Runtime, log logrus.FieldLogger) *Agent {
	if cfg.GCPeriod == 0 {
		cfg.GCPeriod = time.Minute
	}
	a := &Agent{
		cfg:        cfg,
		api:        api,
		cs:         api.Clientset(),
		rt:         rt,
		log:        log,
		now:        time.Now,
		workers:    map[types.UID]*worker{},
		imagesSeen: map[string]imageSeen{},
		mirrors:    map[string]*corev1.Pod{},
		mirrorCh:   make(chan struct{}, 1),
	}
	cfg.Metrics.CountRunning(a.running)
	return a
}

// ErrNoEngine says the Docker engine cannot be reached.
var ErrNoEngine = errors.New("cannot reach the Docker engine (is dockerd running? without Docker, use --simulate N for simulated nodes)")

// Run registers the node and runs its pods until ctx ends. Containers keep running
// when the agent stops; a restarted agent takes them back.
func (a *Agent) Run(ctx context.Context) error {
	err := a.run(ctx)
	if ctx.Err() != nil {
		return nil // stopped, not failed
	}
	return err
}

// CheckEngine tells whether rt can run pods: the engine answers and holds the pod
// infra image, which it builds from this binary when it is missing. It returns
// what the engine says of itself.
func CheckEngine(ctx context.Context, rt runtime.Runtime, pauseImage string, log logrus.FieldLogger) (runtime.Info, error) {
	info, err := rt.Info(ctx)
	if err != nil {
		return info, fmt.Errorf("%w: %v", ErrNoEngine, err)
	}
	if _, err := ensureInfraImage(ctx, rt, pauseImage, log); err != nil {
		return info, err
	}
	return info, nil
}

func (a *Agent) run(ctx context.Context) error {
	info, err := CheckEngine(ctx, a.rt, a.cfg.PauseImage, a.log)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(a.cfg.RootDir, "pods"), 0o750); err != nil {
		return fmt.Errorf("root dir: %w", err)
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: a.cs.CoreV1().Events("")})
	a.rec = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: a.cfg.NodeName})

	a.engineRoot = info.RootDir

	status := a.nodeInfo(info)
	if a.cfg.NoRegister {
		node := a.existingNode(ctx)
		a.mu.Lock()
		a.node = node
		if node != nil {
			a.podCIDR = node.Spec.PodCIDR
		}
		a.mu.Unlock()
		a.log.WithFields(logrus.Fields{"node": a.cfg.NodeName, "ip": a.cfg.NodeIP, "docker": info.Version, "exists": node != nil}).Info("node not registered by the agent (--register-node=false); running the pods bound to it")
	} else {
		node, err := a.register(ctx, status)
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.node = node
		a.podCIDR = node.Spec.PodCIDR
		a.mu.Unlock()
		a.log.WithFields(logrus.Fields{"node": a.cfg.NodeName, "ip": a.cfg.NodeIP, "docker": info.Version}).Info("node registered")
	}

	if a.cfg.NetworkPlugin == NetworkBridge {
		if err := a.startNetwork(ctx); err != nil {
			return err
		}
		defer a.net.Close()
	}

	svcInformer := informers.NewSharedInformerFactory(a.cs, 0).Core().V1().Services().Informer()
	a.services = svcInformer.GetStore()
	go svcInformer.Run(ctx.Done())

	pods := a.api.PodInformer(apiclient.BoundTo(a.cfg.NodeName), 0)
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { a.podUpdated(ctx, o) },
		UpdateFunc: func(_, o any) { a.podUpdated(ctx, o) },
		DeleteFunc: func(o any) { a.podDeleted(ctx, o) },
	}); err != nil {
		return err
	}
	go pods.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, svcInformer.HasSynced) {
		return ctx.Err()
	}
	a.mu.Lock()
	a.synced = true
	a.mu.Unlock()
	a.clusterDNS() // logs the cluster DNS server learned from the API, if any

	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
	run(func(ctx context.Context) { a.heartbeats(ctx, status) })
	run(a.engineEvents)
	run(a.collectGarbage)
	if a.cfg.ManifestPath != "" {
		run(func(ctx context.Context) {
			a.staticPods(ctx, a.cfg.FileCheckFrequency, false, func(context.Context) ([]*corev1.Pod, error) {
				return readManifests(a.cfg.ManifestPath, a.cfg.NodeName)
			})
		})
	}
	if a.cfg.ManifestURL != "" {
		run(func(ctx context.Context) {
			a.staticPods(ctx, a.cfg.HTTPCheckFrequency, true, func(ctx context.Context) ([]*corev1.Pod, error) {
				return fetchManifests(ctx, a.cfg.ManifestURL, a.cfg.NodeName)
			})
		})
	}
	<-ctx.Done()
	wg.Wait()
	a.stopWorkers()
	return nil
}

// nodeInfo is what the node registers and reports, read from the engine and machine.
func (a *Agent) nodeInfo(info runtime.Info) nodestatus.Info {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(info.NCPU), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(info.MemTotal, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(int64(a.cfg.MaxPods), resource.DecimalSI),
	}
	return nodestatus.Info{
		Name:       a.cfg.NodeName,
		InternalIP: a.cfg.NodeIP,
		Hostname:   a.cfg.Hostname,
		Capacity:   capacity,
		DaemonPort: a.cfg.DaemonPort,
		System: corev1.NodeSystemInfo{
			MachineID:               readTrimmed("/etc/machine-id"),
			SystemUUID:              readTrimmed("/sys/class/dmi/id/product_uuid"),
			BootID:                  readTrimmed("/proc/sys/kernel/random/boot_id"),
			KernelVersion:           info.KernelVersion,
			OSImage:                 info.OperatingSystem,
			ContainerRuntimeVersion: "docker://" + info.Version,
			KubeletVersion:          a.cfg.Version,
			KubeProxyVersion:        a.cfg.Version,
			OperatingSystem:         "linux",
			Architecture:            goarch(),
		},
	}
}

// register creates the node (or takes an existing one back), retrying until the
// server answers.
func (a *Agent) register(ctx context.Context, info nodestatus.Info) (*corev1.Node, error) {
	delay := 500 * time.Millisecond
	for {
		node, err := a.api.RegisterNode(ctx, nodestatus.Registration(info, a.now()))
		if err == nil {
			return node, nil
		}
		a.log.WithError(err).Warn("registering the node; retrying")
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// existingNode is the node as the server holds it, or nil when it does not exist
// (or cannot be read).
func (a *Agent) existingNode(ctx context.Context) *corev1.Node {
	n, err := a.cs.CoreV1().Nodes().Get(ctx, a.cfg.NodeName, getOpts)
	if err != nil {
		return nil
	}
	return n
}

// heartbeats posts the node status every StatusFrequency. With --register-node=false
// it posts only while the node exists, and looks for it at every beat until then.
func (a *Agent) heartbeats(ctx context.Context, info nodestatus.Info) {
	t := time.NewTicker(a.cfg.StatusFrequency)
	defer t.Stop()
	for {
		a.mu.Lock()
		node := a.node
		a.mu.Unlock()
		if node == nil {
			node = a.existingNode(ctx)
		}
		var (
			updated *corev1.Node
			err     error
		)
		if node != nil {
			updated, err = a.api.UpdateNodeStatus(ctx, node, func(n *corev1.Node) corev1.NodeStatus {
				return nodestatus.Status(n.Status, info, a.now())
			})
		}
		switch {
		case node == nil:
		case err == nil:
			a.mu.Lock()
			a.node = updated
			a.podCIDR = updated.Spec.PodCIDR
			a.mu.Unlock()
		case ctx.Err() != nil:
			return
		case a.cfg.NoRegister:
			a.log.WithError(err).Warn("posting node status")
			a.mu.Lock()
			a.node = nil // read again at the next beat
			a.mu.Unlock()
		default:
			a.log.WithError(err).Warn("posting node status")
			if n, rerr := a.api.RegisterNode(ctx, nodestatus.Registration(info, a.now())); rerr == nil {
				a.mu.Lock()
				a.node = n
				a.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// engineEvents kicks a pod's worker whenever one of its containers starts, dies or
// is killed for memory, so a crash is noticed at once rather than at the next sync.
// The start of a container the agent started itself is no news: the sync that
// started it observes it afterwards (the engine reports the start before it answers
// the request), and another sync would only ask the engine again. Any other start
// (by hand, after a stop) makes the agent forget its inspection of the container.
func (a *Agent) engineEvents(ctx context.Context) {
	for ctx.Err() == nil {
		events, errs := a.rt.Events(ctx)
	stream:
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-events:
				if !ok {
					break stream
				}
				if ev.Labels[labelNode] != a.cfg.NodeName {
					continue
				}
				switch ev.Action {
				case "start":
					if _, own := a.ownStarts.LoadAndDelete(ev.ContainerID); own {
						continue
					}
					a.inspected.Delete(ev.ContainerID)
					a.kick(types.UID(ev.Labels[labelPodUID]))
				case "destroy":
					a.inspected.Delete(ev.ContainerID)
					a.kick(types.UID(ev.Labels[labelPodUID]))
				case "die", "oom":
					a.kick(types.UID(ev.Labels[labelPodUID]))
				}
			case err := <-errs:
				if ctx.Err() == nil {
					a.log.WithError(err).Warn("engine event stream ended; reconnecting")
				}
				break stream
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// readTrimmed is a small file's content without surrounding space; "" when unreadable.
func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(trimSpace(b))
}

// DefaultNodeIP is the first non-loopback IPv4 address of the machine.
func DefaultNodeIP() (netip.Addr, error) { return firstIPv4() }
