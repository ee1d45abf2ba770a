package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// announcePatch is the merge patch that makes node's ServiceProxyAnnotation say
// mode ("" takes it away), or nil when it already does. Pure.
func announcePatch(node *corev1.Node, mode string) []byte {
	cur, has := node.Annotations[kinds.ServiceProxyAnnotation]
	if cur == mode && has == (mode != "") {
		return nil
	}
	var value any // null removes the annotation
	if mode != "" {
		value = mode
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{kinds.ServiceProxyAnnotation: value}}})
	return b
}

// announce marks the proxy's node with ServiceProxyAnnotation while ctx lasts, and
// takes the mark away when ctx ends: LoadBalancer services get the node's address as
// ingress only while a proxy answers there. It watches its node, so a node created
// after the proxy started (kube-proxy started before its kubelet) or replaced
// without the annotation (the book's `kubectl replace -f unschedule_node.yaml`) is
// marked again. It returns once the mark is taken away.
func announce(ctx context.Context, cs kubernetes.Interface, name, mode string, log logrus.FieldLogger) {
	patch := func(ctx context.Context, n *corev1.Node, mode string) {
		p := announcePatch(n, mode)
		if p == nil {
			return
		}
		if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, p, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			log.WithError(err).Warn("node not marked as running the service proxy: LoadBalancer services will not list its address")
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}))
	inf := factory.Core().V1().Nodes().Informer()
	seen := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && n.Name == name {
			patch(ctx, n, mode)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, n any) { seen(n) }}); err != nil {
		log.WithError(err).Warn("node not marked as running the service proxy")
		return
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()

	// Take the mark away, on a context of its own: ctx has ended.
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := cs.CoreV1().Nodes().Get(stop, name, metav1.GetOptions{})
	if err != nil {
		return
	}
	if p := announcePatch(n, ""); p != nil {
		if _, err := cs.CoreV1().Nodes().Patch(stop, name, types.MergePatchType, p, metav1.PatchOptions{}); err != nil {
			log.WithError(fmt.Errorf("unmark node %s: %w", name, err)).Warn("node still marked as running the service proxy")
		}
	}
}
