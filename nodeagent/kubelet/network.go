package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeactor/kubeactor/nodeagent/podnet"
	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// NetworkBridge is the network plugin that puts pods on the agent's own bridge for
// the node's pod CIDR (nodeagent/podnet), with direct routes to the other nodes.
const NetworkBridge = "bridge"

// startNetwork sets up the bridge of the node's pod CIDR, re-adopts the running
// pods, and keeps the routes to the other nodes' CIDRs in step with the nodes.
func (a *Agent) startNetwork(ctx context.Context) error {
	cidr, err := a.waitPodCIDR(ctx)
	if err != nil {
		return err
	}
	br, err := podnet.New(podnet.Config{BridgeName: a.cfg.BridgeName, PodCIDR: cidr})
	if err != nil {
		return fmt.Errorf("pod network: %w", err)
	}
	a.net = br
	live := map[string]int{}
	sandboxes, err := a.rt.ListContainers(ctx, map[string]string{labelNode: a.cfg.NodeName, podsync.LabelContainer: podsync.InfraName})
	if err != nil {
		return err
	}
	for _, c := range sandboxes {
		if !c.Running() {
			continue
		}
		if full, err := a.rt.InspectContainer(ctx, c.ID); err == nil && full.PID > 0 {
			live[full.Labels[labelPodUID]] = full.PID
		}
	}
	br.Restore(live)
	if err := br.SyncFirewall(a.cfg.ClusterCIDR); err != nil {
		return fmt.Errorf("pod network firewall: %w", err)
	}
	nodes := informers.NewSharedInformerFactory(a.cs, 0).Core().V1().Nodes().Informer()
	sync := func(any) { a.syncRoutes(nodes.GetStore()) }
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: sync, UpdateFunc: func(_, n any) { sync(n) }, DeleteFunc: sync,
	}); err != nil {
		return err
	}
	go nodes.Run(ctx.Done())
	a.log.WithField("podCIDR", cidr).Info("pod network ready")
	return nil
}

// waitPodCIDR waits until the server has given the node a pod CIDR.
func (a *Agent) waitPodCIDR(ctx context.Context) (string, error) {
	for {
		n, err := a.cs.CoreV1().Nodes().Get(ctx, a.cfg.NodeName, metav1.GetOptions{})
		if err == nil && n.Spec.PodCIDR != "" {
			return n.Spec.PodCIDR, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// syncRoutes installs a route to every other node's pod CIDR via its InternalIP.
func (a *Agent) syncRoutes(store cache.Store) {
	var routes []podnet.Route
	for _, o := range store.List() {
		n, ok := o.(*corev1.Node)
		if !ok || n.Spec.PodCIDR == "" {
			continue
		}
		for _, addr := range n.Status.Addresses {
			if addr.Type == corev1.NodeInternalIP {
				routes = append(routes, podnet.Route{PodCIDR: n.Spec.PodCIDR, NodeIP: addr.Address})
				break
			}
		}
	}
	if err := a.net.SyncRoutes(routes); err != nil {
		a.log.WithError(err).Warn("routes to the other nodes' pod CIDRs")
	}
}

// wirePod connects a started infra container to the bridge and returns its IP.
func (a *Agent) wirePod(ctx context.Context, pod *corev1.Pod, sb runtime.Container) (runtime.Container, error) {
	if a.net == nil || pod.Spec.HostNetwork {
		return sb, nil
	}
	ip, err := a.net.SetUpPod(string(pod.UID), sb.PID)
	if err != nil {
		return sb, fmt.Errorf("pod network: %w", err)
	}
	a.podIPs.Store(sb.ID, ip)
	sb.IP = ip
	return sb, nil
}

// sandboxIP fills in the IP of a running infra container on the bridge, which the
// engine does not know.
func (a *Agent) sandboxIP(c runtime.Container) runtime.Container {
	if a.net == nil || !c.Running() || c.IP != "" || c.Labels[podsync.LabelContainer] != podsync.InfraName {
		return c
	}
	if ip, ok := a.podIPs.Load(c.ID); ok {
		c.IP = ip.(string)
		return c
	}
	if ip, err := a.net.PodIP(c.PID); err == nil {
		a.podIPs.Store(c.ID, ip)
		c.IP = ip
	}
	return c
}

// unwirePod releases a pod's address when its pod is gone.
func (a *Agent) unwirePod(pod *corev1.Pod) {
	if a.net == nil {
		return
	}
	if err := a.net.TearDownPod(string(pod.UID), 0); err != nil {
		a.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("removing the pod's network")
	}
}
