package kubelet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

const (
	labelNode   = podsync.LabelNode
	labelPodUID = podsync.LabelPodUID
)

// retrySoon is how long a sync that failed on the engine or the API waits.
const retrySoon = 2 * time.Second

// syncPod runs one sync of w's pod. It returns when the next sync is due (0 for the
// default) and whether the worker is finished: the pod is gone and its containers
// removed.
func (a *Agent) syncPod(ctx context.Context, w *worker) (time.Duration, bool) {
	pod := w.latest.Load()
	ctx, tr := a.traceSync(ctx, w, pod) // tracing.go
	w.st.trace = tr
	next, finished := a.sync(ctx, w, pod)
	w.st.trace = nil
	tr.end(w, attribute.String("requeue", next.String()), attribute.Bool("finished", finished))
	return next, finished
}

// sync is syncPod's work, traced by w.st.trace.
func (a *Agent) sync(ctx context.Context, w *worker, pod *corev1.Pod) (time.Duration, bool) {
	tr := w.st.trace
	log := a.log.WithField("pod", pod.Namespace+"/"+pod.Name)
	obs, err := a.observe(ctx, pod.UID)
	if err != nil {
		log.WithError(err).Warn("listing the pod's containers")
		return retrySoon, false
	}
	if w.gone.Load() || pod.DeletionTimestamp != nil {
		if len(obs.Containers) > 0 {
			ctx = tr.begin(ctx)
		}
		return a.terminate(ctx, w, pod, obs, log)
	}

	st := &w.st
	if !st.volumesReady {
		vols, err := a.mountVolumes(ctx, pod)
		if err != nil {
			var unsupported unsupportedVolume
			retry := 5 * time.Second
			if errors.As(err, &unsupported) {
				// The pod's volumes never change: say it once and look again at the
				// pod's usual pace, in case this node learns the type.
				retry = a.cfg.SyncFrequency
				if st.message != err.Error() {
					a.rec.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "%v", err)
					log.WithError(err).Warn("mounting volumes")
				}
			} else if st.message != err.Error() {
				a.rec.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "Unable to mount volumes for pod %q: %v", podsync.FullName(pod), err)
				log.WithError(err).Warn("mounting volumes")
			}
			st.reason, st.message = "FailedMount", err.Error()
			a.postStatus(ctx, w, pod, obs, log)
			return retry, false
		}
		st.volumes, st.volumesReady = vols, true
		st.reason, st.message = "", ""
	}

	now := a.now()
	plan := podsync.ComputePlan(pod, obs, a.livenessFailed(w, obs), st.backoff, now)
	st.backoff = plan.Backoff
	st.waiting = map[string]corev1.ContainerStateWaiting{}
	for name, wt := range plan.Waiting {
		st.waiting[name] = wt
		if wt.Reason == "CrashLoopBackOff" {
			a.rec.Eventf(podsync.ContainerRef(pod, name), corev1.EventTypeWarning, "BackOff", "%s", wt.Message)
		}
	}
	if plan.KillPod || len(plan.Kill) > 0 || plan.CreateSandbox || len(plan.Start) > 0 {
		ctx = tr.begin(ctx)
		if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
			sp.SetAttributes(attribute.Bool("plan.killPod", plan.KillPod), attribute.Int("plan.kill", len(plan.Kill)),
				attribute.Bool("plan.createSandbox", plan.CreateSandbox), attribute.Int("plan.start", len(plan.Start)))
		}
	}
	grace := gracePeriod(pod)
	stopped := plan.KillPod && a.killAll(ctx, pod, obs, grace, "pod's infra container is not running or the pod is finished", log)
	for _, k := range plan.Kill {
		a.rec.Eventf(podsync.ContainerRef(pod, k.Name), corev1.EventTypeNormal, "Killing", "Killing container %s: %s", k.Name, k.Message)
		if err := a.rt.StopContainer(ctx, k.ID, grace); err != nil && !runtime.IsNotFound(err) {
			log.WithError(err).WithField("container", k.Name).Warn("stopping container")
		}
	}
	if len(plan.Kill) > 0 || stopped {
		// Later decisions (and the status) need the state after the kills.
		if obs, err = a.observe(ctx, pod.UID); err != nil {
			return retrySoon, false
		}
	}
	sandboxID, podIP := "", ""
	if sb, ok := obs.Sandbox(); ok && sb.Running() {
		sandboxID, podIP = sb.ID, sb.IP
	}
	if plan.CreateSandbox {
		sb, err := a.createSandbox(ctx, pod)
		if err != nil {
			a.rec.Eventf(pod, corev1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create the pod's infra container: %v", err)
			log.WithError(err).Warn("creating the infra container")
			return retrySoon, false
		}
		sandboxID, podIP = sb.ID, sb.IP
	}
	requeue := plan.RequeueAfter
	if len(plan.Start) > 0 && sandboxID != "" {
		services := a.servicesSnapshot()
		for _, s := range plan.Start {
			if d := a.startContainer(ctx, w, pod, s, sandboxID, podIP, services, log); d > 0 && (requeue == 0 || d < requeue) {
				requeue = d
			}
		}
	}
	if obs, err = a.observe(ctx, pod.UID); err != nil {
		return retrySoon, false
	}
	if d := a.runProbes(ctx, w, pod, obs); d > 0 && (requeue == 0 || d < requeue) {
		requeue = d
	}
	a.postStatus(ctx, w, pod, obs, log)
	return requeue, false
}

// observe lists the engine's containers of one pod, each inspected (a list has no
// start times or exit codes). An inspection is kept while the list shows that it
// still describes the container (podsync.InspectionCurrent): every sync of a
// running pod would otherwise inspect all its containers again, and the engine
// serves those calls from the CPU its container starts need.
func (a *Agent) observe(ctx context.Context, uid types.UID) (podsync.Observed, error) {
	cs, err := a.rt.ListContainers(ctx, map[string]string{labelPodUID: string(uid), labelNode: a.cfg.NodeName})
	if err != nil {
		return podsync.Observed{}, err
	}
	out := make([]runtime.Container, 0, len(cs))
	for _, c := range cs {
		if kept, ok := a.inspected.Load(c.ID); ok && podsync.InspectionCurrent(c.State, kept.(runtime.Container)) {
			out = append(out, a.sandboxIP(kept.(runtime.Container)))
			continue
		}
		full, err := a.rt.InspectContainer(ctx, c.ID)
		if runtime.IsNotFound(err) {
			continue // removed meanwhile
		}
		if err != nil {
			return podsync.Observed{}, err
		}
		a.keepInspection(full)
		out = append(out, a.sandboxIP(full))
	}
	return podsync.Observed{Containers: out}, nil
}

// keepInspection keeps c's inspection for later syncs, or forgets an earlier one
// when c is in a state that does not last (created).
func (a *Agent) keepInspection(c runtime.Container) {
	if podsync.InspectionCurrent(c.State, c) {
		a.inspected.Store(c.ID, c)
	} else {
		a.inspected.Delete(c.ID)
	}
}

// start starts a container the agent created, noting first that its start event
// will be no news (engineEvents).
func (a *Agent) start(ctx context.Context, id string) error {
	a.ownStarts.Store(id, struct{}{})
	if err := a.rt.StartContainer(ctx, id); err != nil {
		a.ownStarts.Delete(id)
		return err
	}
	return nil
}

// createSandbox creates and starts the pod's infra container and returns it as
// inspected (with its IP).
func (a *Agent) createSandbox(ctx context.Context, pod *corev1.Pod) (runtime.Container, error) {
	cfg := podsync.SandboxConfig(pod, a.cfg.NodeName, a.cfg.PauseImage, suffix(), podsync.PodDNS(pod, a.clusterDNS(), a.cfg.ClusterDomain))
	switch {
	case cfg.NetworkMode != "": // the host's network
	case a.net != nil:
		cfg.NetworkMode, cfg.PortBindings = "none", nil // wired to the bridge below
	case a.cfg.Network != "":
		cfg.NetworkMode = a.cfg.Network
	}
	id, err := a.rt.CreateContainer(ctx, cfg)
	if err != nil {
		return runtime.Container{}, err
	}
	if err := a.start(ctx, id); err != nil {
		_ = a.removeContainer(ctx, id)
		return runtime.Container{}, err
	}
	sb, err := a.rt.InspectContainer(ctx, id)
	if err != nil {
		return sb, err
	}
	a.keepInspection(sb) // the sync's next observe need not inspect it again
	return a.wirePod(ctx, pod, sb)
}

// startContainer creates and starts one app container. Failures become the
// container's waiting reason; the returned duration asks for an earlier re-sync.
func (a *Agent) startContainer(ctx context.Context, w *worker, pod *corev1.Pod, s podsync.Start, sandboxID, podIP string, services []corev1.Service, log logrus.FieldLogger) time.Duration {
	c := &pod.Spec.Containers[s.Index]
	st := &w.st
	if wt, retry := a.ensureImage(ctx, w, pod, c); wt != nil {
		st.waiting[c.Name] = *wt
		return retry
	}
	env, err := podsync.ContainerEnv(pod, c, podIP, a.cfg.NodeIP, services, a.envLookup(ctx, pod.Namespace))
	if err != nil {
		st.waiting[c.Name] = corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()}
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "Failed", "Error: %v", err)
		return 5 * time.Second
	}
	cfg, err := podsync.ContainerConfig(pod, s.Index, a.cfg.NodeName, sandboxID, suffix(), env, st.volumes, s.RestartCount)
	if err != nil {
		st.waiting[c.Name] = corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()}
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "Failed", "Error: %v", err)
		return 5 * time.Second
	}
	id, err := a.rt.CreateContainer(ctx, cfg)
	if err != nil {
		st.waiting[c.Name] = corev1.ContainerStateWaiting{Reason: "CreateContainerError", Message: err.Error()}
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "Failed", "Error: %v", err)
		log.WithError(err).WithField("container", c.Name).Warn("creating container")
		return retrySoon
	}
	a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeNormal, "Created", "Created container %s", c.Name)
	if err := a.start(ctx, id); err != nil {
		st.waiting[c.Name] = corev1.ContainerStateWaiting{Reason: "RunContainerError", Message: err.Error()}
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "Failed", "Error: %v", err)
		log.WithError(err).WithField("container", c.Name).Warn("starting container")
		return retrySoon
	}
	delete(st.waiting, c.Name)
	a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeNormal, "Started", "Started container %s", c.Name)
	return 0
}

// killAll stops every running container of the pod, the app containers first, and
// tells whether there was any.
func (a *Agent) killAll(ctx context.Context, pod *corev1.Pod, obs podsync.Observed, grace time.Duration, why string, log logrus.FieldLogger) bool {
	var sandboxes []runtime.Container
	stopped := false
	for _, c := range obs.Containers {
		if !c.Running() {
			continue
		}
		stopped = true
		if c.Labels[podsync.LabelContainer] == podsync.InfraName {
			sandboxes = append(sandboxes, c)
			continue
		}
		a.rec.Eventf(podsync.ContainerRef(pod, c.Labels[podsync.LabelContainer]), corev1.EventTypeNormal, "Killing", "Stopping container %s", c.Labels[podsync.LabelContainer])
		if err := a.rt.StopContainer(ctx, c.ID, grace); err != nil && !runtime.IsNotFound(err) {
			log.WithError(err).Warn("stopping container")
		}
	}
	for _, c := range sandboxes {
		if err := a.rt.StopContainer(ctx, c.ID, 0); err != nil && !runtime.IsNotFound(err) {
			log.WithError(err).Warn("stopping the infra container")
		}
	}
	if stopped {
		log.WithField("why", why).Debug("stopped the pod's containers")
	}
	return stopped
}

// terminate stops and removes a deleted pod's containers and volumes. A pod that is
// only marked for deletion is then deleted for good, which ends the worker when the
// watch reports it.
func (a *Agent) terminate(ctx context.Context, w *worker, pod *corev1.Pod, obs podsync.Observed, log logrus.FieldLogger) (time.Duration, bool) {
	a.killAll(ctx, pod, obs, gracePeriod(pod), "pod deleted", log)
	for _, c := range obs.Containers {
		if err := a.removeContainer(ctx, c.ID); err != nil && !runtime.IsNotFound(err) {
			log.WithError(err).Warn("removing container")
			return retrySoon, false
		}
	}
	if err := a.unmountVolumes(pod.UID); err != nil {
		log.WithError(err).Warn("removing volumes")
		return retrySoon, false
	}
	a.unwirePod(pod)
	w.st.volumesReady = false
	if w.gone.Load() {
		return 0, true
	}
	if w.static {
		return 0, true
	}
	if err := a.api.DeletePod(ctx, pod.Namespace, pod.Name, pod.UID); err != nil {
		log.WithError(err).Warn("deleting the terminated pod")
		return retrySoon, false
	}
	return 0, false
}

// postStatus computes the pod's status and posts it when it changed.
func (a *Agent) postStatus(ctx context.Context, w *worker, pod *corev1.Pod, obs podsync.Observed, log logrus.FieldLogger) {
	st := &w.st
	in := podsync.StatusInput{
		HostIP:  a.cfg.NodeIP,
		Ready:   a.readiness(w, obs),
		Waiting: st.waiting,
		Reason:  st.reason,
		Message: st.message,
	}
	target := pod
	if w.static {
		m := a.mirrorOf(pod)
		if m == nil {
			return
		}
		target = m
	}
	status := podsync.ComputeStatus(target, obs, in, a.now())
	a.measure(w, pod, &status)
	if st.posted != nil && apiequality.Semantic.DeepEqual(*st.posted, status) {
		return
	}
	if apiequality.Semantic.DeepEqual(target.Status, status) {
		st.posted = &status
		return
	}
	ctx = st.trace.begin(ctx) // the status write continues the sync's trace
	updated, err := a.api.UpdatePodStatus(ctx, target, func(cur *corev1.Pod) (corev1.PodStatus, bool) {
		s := podsync.ComputeStatus(cur, obs, in, a.now())
		return s, !apiequality.Semantic.DeepEqual(cur.Status, s)
	})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			log.WithError(err).Warn("posting pod status")
		}
		return
	}
	st.posted = &status
	if updated != nil && !w.static {
		st.postedRV = updated.ResourceVersion
	}
}

// measure keeps the worker's running count for the metrics, and observes the pod's
// start duration the first time all its containers run.
func (a *Agent) measure(w *worker, pod *corev1.Pod, status *corev1.PodStatus) {
	running, all := int32(0), len(status.ContainerStatuses) == len(pod.Spec.Containers)
	for _, cs := range status.ContainerStatuses {
		if cs.State.Running != nil {
			running++
		} else {
			all = false
		}
	}
	if status.Phase != corev1.PodRunning {
		running = -1
	}
	w.running.Store(running)
	if all && running >= 0 && !w.st.started {
		w.st.started = true
		a.cfg.Metrics.PodStarted(a.now().Sub(pod.CreationTimestamp.Time))
	}
}

// gracePeriod is how long a container gets between SIGTERM and SIGKILL: actors/pod's
// KillGrace (the deletion's grace, else terminationGracePeriodSeconds, else 30s).
func gracePeriod(pod *corev1.Pod) time.Duration {
	return time.Duration(podpkg.KillGrace(pod)) * time.Second
}

// servicesSnapshot lists every service the agent knows of.
func (a *Agent) servicesSnapshot() []corev1.Service {
	if a.services == nil {
		return nil
	}
	objs := a.services.List()
	out := make([]corev1.Service, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok {
			out = append(out, *s)
		}
	}
	return out
}

// clusterDNS is the nameserver of ClusterFirst pods: --cluster-dns, else the
// cluster IP of the kube-system/kube-dns service as the agent's service watch last
// saw it, else none.
func (a *Agent) clusterDNS() string {
	var svc *corev1.Service
	if a.cfg.ClusterDNS == "" && a.services != nil {
		if o, ok, _ := a.services.GetByKey(podsync.KubeDNSNamespace + "/" + podsync.KubeDNSName); ok {
			svc, _ = o.(*corev1.Service)
		}
	}
	ip := podsync.ClusterDNSServer(a.cfg.ClusterDNS, svc)
	if a.cfg.ClusterDNS == "" {
		if old, _ := a.learnedDNS.Swap(ip).(string); old != ip {
			a.log.WithFields(logrus.Fields{"cluster-dns": ip, "from": "service kube-system/kube-dns"}).Info("cluster DNS server for new pods")
		}
	}
	return ip
}

// envLookup resolves secretKeyRef and configMapKeyRef for a pod's environment.
func (a *Agent) envLookup(ctx context.Context, namespace string) podsync.EnvLookup {
	return func(kind, name, key string) (string, bool, error) {
		switch kind {
		case "Secret":
			s, err := a.cs.CoreV1().Secrets(namespace).Get(ctx, name, getOpts)
			if apierrors.IsNotFound(err) {
				return "", false, nil
			}
			if err != nil {
				return "", false, err
			}
			v, ok := s.Data[key]
			return string(v), ok, nil
		case "ConfigMap":
			return "", false, fmt.Errorf("configmaps are not served by this cluster")
		}
		return "", false, fmt.Errorf("unknown reference kind %s", kind)
	}
}

// suffix is the random last part of a container name.
func suffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// removeContainer removes a container from the engine and from the cache.
func (a *Agent) removeContainer(ctx context.Context, id string) error {
	a.inspected.Delete(id)
	a.ownStarts.Delete(id)
	return a.rt.RemoveContainer(ctx, id)
}
