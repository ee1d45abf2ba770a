package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

type stopCmd struct {
	clientFlags
	Timeout time.Duration `name:"timeout" default:"5m" help:"How long to wait for the pods to go."`
	Args    []string      `arg:"" name:"type" help:"rc NAME or rc/NAME (pods and services are deleted at once)."`
}

func (c *stopCmd) Run(g *globals) error {
	cs, ns, err := c.clientset()
	if err != nil {
		return report(g.stderr, err)
	}
	return report(g.stderr, c.run(context.Background(), cs, ns, g.stdout, time.Second))
}

// run stops each named object: a replication controller is scaled to 0, its pods
// waited for, then deleted; pods and services are just deleted.
func (c *stopCmd) run(ctx context.Context, cs kubernetes.Interface, ns string, out io.Writer, interval time.Duration) error {
	reqs, err := parseTypeArgs(c.Args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	for _, r := range reqs {
		if len(r.Names) == 0 {
			return fmt.Errorf("you must specify the name of the %s to stop", r.Type)
		}
		for _, name := range r.Names {
			kind, err := stopOne(ctx, cs, ns, r.Type, name, interval)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s/%s stopped\n", kind, name)
		}
	}
	return nil
}

func stopOne(ctx context.Context, cs kubernetes.Interface, ns, typ, name string, interval time.Duration) (string, error) {
	switch typ {
	case "rc", "replicationcontroller", "replicationcontrollers":
		return "replicationcontroller", stopRC(ctx, cs, ns, name, interval)
	case "po", "pod", "pods":
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return "", fmt.Errorf("delete pod %q: %w", name, err)
		}
		return "pod", nil
	case "svc", "service", "services":
		if err := cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return "", fmt.Errorf("delete service %q: %w", name, err)
		}
		return "service", nil
	}
	return "", fmt.Errorf("stop does not support %q: replicationcontrollers, pods or services", typ)
}

func stopRC(ctx context.Context, cs kubernetes.Interface, ns, name string, interval time.Duration) error {
	rcs := cs.CoreV1().ReplicationControllers(ns)
	rc, err := rcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get replicationcontroller %q: %w", name, err)
	}
	if _, err := rcs.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("scale replicationcontroller %q to 0: %w", name, err)
	}
	sel := labels.SelectorFromSet(rc.Spec.Selector).String()
	err = wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == rc.UID {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the pods of replicationcontroller %q to go: %w", name, err)
	}
	if err := rcs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete replicationcontroller %q: %w", name, err)
	}
	return nil
}
