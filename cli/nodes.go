package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// clientset is the typed client for the resolved connection, and the namespace.
func (f *clientFlags) clientset() (kubernetes.Interface, string, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, "", err
	}
	ns, err := f.namespace()
	if err != nil {
		return nil, "", err
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kubeactor/" + Version
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("create client: %w", err)
	}
	return cs, ns, nil
}

type cordonCmd struct {
	clientFlags
	Node string `arg:"" name:"node" help:"The node to mark unschedulable."`
}

func (c *cordonCmd) Run(g *globals) error {
	cs, _, err := c.clientset()
	if err != nil {
		return report(g.stderr, err)
	}
	return report(g.stderr, setUnschedulable(context.Background(), cs, c.Node, true, g.stdout))
}

type uncordonCmd struct {
	clientFlags
	Node string `arg:"" name:"node" help:"The node to mark schedulable."`
}

func (c *uncordonCmd) Run(g *globals) error {
	cs, _, err := c.clientset()
	if err != nil {
		return report(g.stderr, err)
	}
	return report(g.stderr, setUnschedulable(context.Background(), cs, c.Node, false, g.stdout))
}

// cordonVerb is what cordon (want true) or uncordon did.
func cordonVerb(want bool) string {
	if want {
		return "cordoned"
	}
	return "uncordoned"
}

// unschedulablePatch is the merge patch that sets spec.unschedulable to want (false
// removes the field, as kubectl does).
func unschedulablePatch(want bool) []byte {
	if want {
		return []byte(`{"spec":{"unschedulable":true}}`)
	}
	return []byte(`{"spec":{"unschedulable":null}}`)
}

// setUnschedulable patches the node's spec.unschedulable to want, unless it already is.
func setUnschedulable(ctx context.Context, cs kubernetes.Interface, name string, want bool, out io.Writer) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get node %q: %w", name, err)
	}
	if n.Spec.Unschedulable == want {
		fmt.Fprintf(out, "node/%s already %s\n", name, cordonVerb(want))
		return nil
	}
	if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, unschedulablePatch(want), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch node %q: %w", name, err)
	}
	fmt.Fprintf(out, "node/%s %s\n", name, cordonVerb(want))
	return nil
}

type drainCmd struct {
	clientFlags
	Force            bool          `name:"force" help:"Continue even if there are pods not managed by a replication controller."`
	GracePeriod      int           `name:"grace-period" default:"-1" help:"Seconds given to each pod to terminate gracefully; negative uses the pod's own."`
	IgnoreDaemonsets bool          `name:"ignore-daemonsets" help:"Ignore DaemonSet-managed pods (there are none here)."`
	Timeout          time.Duration `name:"timeout" default:"0s" help:"How long to wait before giving up; zero waits forever."`
	Node             string        `arg:"" name:"node" help:"The node to drain."`
}

func (c *drainCmd) Run(g *globals) error {
	cs, _, err := c.clientset()
	if err != nil {
		return report(g.stderr, err)
	}
	return report(g.stderr, c.run(context.Background(), cs, g.stdout, g.stderr, time.Second))
}

// drainPlan is what draining finds on a node: the pods to delete and the ones it
// refuses to delete.
type drainPlan struct {
	Delete    []corev1.Pod
	Unmanaged []string // namespace/name of pods with no controller
	Mirror    []string // static pods, skipped
}

// planDrain sorts the node's pods: mirror pods are skipped, pods with no
// controller are refused unless force (and then deleted too).
func planDrain(pods []corev1.Pod, node string, force bool) drainPlan {
	var p drainPlan
	for _, pod := range pods {
		if pod.Spec.NodeName != node {
			continue
		}
		id := pod.Namespace + "/" + pod.Name
		if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
			p.Mirror = append(p.Mirror, id)
			continue
		}
		if metav1.GetControllerOf(&pod) == nil {
			p.Unmanaged = append(p.Unmanaged, id)
			if !force {
				continue
			}
		}
		p.Delete = append(p.Delete, pod)
	}
	sort.Strings(p.Unmanaged)
	return p
}

// check is kubectl's refusal or warning for the plan.
func (p drainPlan) check(force bool, stderr io.Writer) error {
	if len(p.Unmanaged) > 0 {
		if !force {
			return fmt.Errorf("cannot delete Pods that declare no controller (use --force to override): %s", strings.Join(p.Unmanaged, ", "))
		}
		fmt.Fprintf(stderr, "Warning: deleting Pods that declare no controller: %s\n", strings.Join(p.Unmanaged, ", "))
	}
	if len(p.Mirror) > 0 {
		fmt.Fprintf(stderr, "Warning: ignoring mirror Pods: %s\n", strings.Join(p.Mirror, ", "))
	}
	return nil
}

func (c *drainCmd) run(ctx context.Context, cs kubernetes.Interface, out, stderr io.Writer, interval time.Duration) error {
	if err := setUnschedulable(ctx, cs, c.Node, true, out); err != nil {
		return err
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	list, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", c.Node).String(),
	})
	if err != nil {
		return fmt.Errorf("list pods on node %q: %w", c.Node, err)
	}
	plan := planDrain(list.Items, c.Node, c.Force)
	if err := plan.check(c.Force, stderr); err != nil {
		return err
	}
	var opts metav1.DeleteOptions
	if c.GracePeriod >= 0 {
		g := int64(c.GracePeriod)
		opts.GracePeriodSeconds = &g
	}
	var errs []error
	for _, pod := range plan.Delete {
		err := cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, pod := range plan.Delete {
		if err := waitPodGone(ctx, cs, pod, interval); err != nil {
			return err
		}
		fmt.Fprintf(out, "pod/%s deleted\n", pod.Name)
	}
	fmt.Fprintf(out, "node/%s drained\n", c.Node)
	return nil
}

// waitPodGone polls until the pod (this very pod, by UID) no longer exists.
func waitPodGone(ctx context.Context, cs kubernetes.Interface, pod corev1.Pod, interval time.Duration) error {
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, err
		}
		return p.UID != pod.UID, nil
	})
	if err != nil {
		return fmt.Errorf("wait for pod %s/%s to be deleted: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
