package kubelet

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeactor/kubeactor/nodeagent/podsync"
)

// worker owns one pod: a goroutine whose mailbox holds only the latest version of
// the pod, so a burst of updates costs one sync.
type worker struct {
	uid    types.UID
	latest atomic.Pointer[corev1.Pod]
	gone   atomic.Bool // the pod left the API server (or its source)
	static bool        // from --pod-manifest-path; its status goes to the mirror pod
	kick   chan struct{}
	done   chan struct{}
	// running counts the pod's running containers, -1 when the pod is not Running,
	// as of its last status (for the metrics, read by another goroutine).
	running atomic.Int32

	// Owned by the worker's goroutine.
	st podState
}

// podState is what a worker remembers between syncs.
type podState struct {
	backoff      podsync.Backoff
	pullBackoff  map[string]pullState // image pull back-off by container name
	waiting      map[string]corev1.ContainerStateWaiting
	probes       map[probeKey]*probeRecord
	volumesReady bool
	volumes      map[string]string // volume name → host path
	started      bool              // every container ran once: the pod's start was measured
	posted       *corev1.PodStatus // last status posted
	reason       string            // pod-level reason and message (a missing secret)
	message      string
	// Tracing (tracing.go): the pod version whose sync was traced last, the version
	// the agent's last status write made, the span of the last sync that acted, and
	// the span of the sync running now.
	tracedRV string
	postedRV string
	lastSync trace.SpanContext
	trace    *syncTrace
}

// send hands pod to its worker, starting one if needed.
func (a *Agent) send(ctx context.Context, pod *corev1.Pod, static bool) {
	a.mu.Lock()
	w, ok := a.workers[pod.UID]
	if !ok {
		w = &worker{uid: pod.UID, static: static, kick: make(chan struct{}, 1), done: make(chan struct{})}
		w.running.Store(-1) // not Running until its status says so
		a.workers[pod.UID] = w
	}
	w.latest.Store(pod)
	a.mu.Unlock()
	if !ok {
		go a.runWorker(ctx, w)
	}
	w.wake()
}

func (w *worker) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// kick wakes the worker of a pod, if it has one.
func (a *Agent) kick(uid types.UID) {
	a.mu.Lock()
	w := a.workers[uid]
	a.mu.Unlock()
	if w != nil {
		w.wake()
	}
}

// podUpdated and podDeleted are the pod informer's handlers.
func (a *Agent) podUpdated(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || isMirror(pod) {
		if ok {
			a.mirrorSeen(pod)
		}
		return
	}
	a.send(ctx, pod, false)
}

func (a *Agent) podDeleted(_ context.Context, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if isMirror(pod) {
		a.mirrorGone(pod)
		return
	}
	a.mu.Lock()
	w := a.workers[pod.UID]
	a.mu.Unlock()
	if w != nil {
		w.gone.Store(true)
		w.wake()
	}
}

// runWorker syncs its pod on every kick, when a sync asks to be requeued, and at
// least every SyncFrequency, until the pod is gone and cleaned up.
func (a *Agent) runWorker(ctx context.Context, w *worker) {
	defer close(w.done)
	w.st = podState{backoff: podsync.Backoff{}, pullBackoff: map[string]pullState{}, probes: map[probeKey]*probeRecord{}}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-timer.C:
		}
		next, finished := a.syncPod(ctx, w)
		if finished {
			a.mu.Lock()
			if a.workers[w.uid] == w {
				delete(a.workers, w.uid)
			}
			a.mu.Unlock()
			return
		}
		if next <= 0 || next > a.cfg.SyncFrequency {
			next = a.cfg.SyncFrequency
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// stopWorkers waits for every worker to notice the end of the agent's context.
func (a *Agent) stopWorkers() {
	a.mu.Lock()
	ws := make([]*worker, 0, len(a.workers))
	for _, w := range a.workers {
		ws = append(ws, w)
	}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); <-w.done }()
	}
	wg.Wait()
}

// wanted lists the uids of the pods the agent runs.
func (a *Agent) wanted() (map[string]bool, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]bool, len(a.workers))
	for uid := range a.workers {
		out[string(uid)] = true
	}
	return out, a.synced
}

// running counts the pods whose last status is Running and their running
// containers (the metrics' kubelet_running_pods and kubelet_running_containers).
func (a *Agent) running() (pods, containers int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.workers {
		if n := w.running.Load(); n >= 0 && !w.gone.Load() {
			pods++
			containers += int(n)
		}
	}
	return pods, containers
}

// pods is a snapshot of the pods the agent runs, as last seen.
func (a *Agent) pods() []*corev1.Pod {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(a.workers))
	for _, w := range a.workers {
		if p := w.latest.Load(); p != nil && !w.gone.Load() {
			out = append(out, p)
		}
	}
	return out
}
