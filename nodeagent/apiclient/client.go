package apiclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/kubeactor/kubeactor/nodeagent/spans"
)

// Options says how to reach the API server.
type Options struct {
	Server string // http(s)://host:port, or several (master replicas) separated by commas; with Kubeconfig, "" takes its cluster's
	// Kubeconfig is a kubeconfig file whose current context gives the credentials
	// (client certificate, bearer token or basic auth) and the CA (the kubelet's
	// --kubeconfig); "" is none: plain requests to Server.
	Kubeconfig string
	QPS        float32 // client-side request rate limit; negative for none
	Burst      int
	MaxConns   int    // idle connections kept to the server; at least the writers' count
	UserAgent  string // e.g. "kubeactor-agent/v0.1.0"
	// Trace sends the trace context of each request's context as a traceparent
	// header (spans.Inject): the server's spans of the agent's writes continue the
	// agent's trace.
	Trace bool
}

// Client talks to the API server on behalf of one or many nodes. It is safe for
// concurrent use.
type Client struct {
	cs  kubernetes.Interface
	cfg *rest.Config // nil for NewForClientset
}

// New connects (lazily) to the server in o. Requests and responses use protobuf, the
// cheapest encoding the server speaks.
func New(o Options) (*Client, error) {
	var servers []string
	if o.Server != "" || o.Kubeconfig == "" {
		var err error
		if servers, err = Servers(o.Server); err != nil {
			return nil, err
		}
	}
	first := ""
	if len(servers) > 0 {
		first = servers[0]
	}
	cfg := &rest.Config{Host: first}
	if o.Kubeconfig != "" {
		kc, err := clientcmd.BuildConfigFromFlags(first, o.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", o.Kubeconfig, err)
		}
		cfg = kc
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", cfg.Host, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("server %q: want http://host:port or https://host:port", cfg.Host)
	}
	cfg.QPS, cfg.Burst, cfg.UserAgent = o.QPS, o.Burst, o.UserAgent
	cfg.ContentConfig = rest.ContentConfig{
		ContentType:        "application/vnd.kubernetes.protobuf",
		AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json",
	}
	if u.Scheme == "http" && o.Kubeconfig == "" {
		// client-go keeps 25 idle connections per host; writers beyond that would
		// open and close a connection per request.
		cfg.Transport = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        max(o.MaxConns, 25) + 8,
			MaxIdleConnsPerHost: max(o.MaxConns, 25) + 8,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	if len(servers) > 1 {
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			f, err := NewFailover(servers, rt)
			if err != nil {
				return rt
			}
			return f
		}
	}
	if o.Trace {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return spans.Inject{Next: rt} })
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	return &Client{cs: cs, cfg: cfg}, nil
}

// NewForClientset wraps an existing clientset (for tests and embedders).
func NewForClientset(cs kubernetes.Interface) *Client { return &Client{cs: cs} }

// Clientset is the underlying client, for the calls this package does not wrap.
func (c *Client) Clientset() kubernetes.Interface { return c.cs }

// RegisterNode creates node. If a node of that name exists already, it is kept and
// returned as the server holds it: a restarted agent takes its node back.
func (c *Client) RegisterNode(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	created, err := c.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("register node %s: %w", node.Name, err)
	}
	got, err := c.cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("register node %s: get existing: %w", node.Name, err)
	}
	return got, nil
}

// UpdateNodeStatus posts status(node) through nodes/status, starting from node as
// last seen. On a conflict it reads the node again and reapplies status. It returns
// the node as stored; a NotFound error means the node was deleted.
func (c *Client) UpdateNodeStatus(ctx context.Context, node *corev1.Node, status func(*corev1.Node) corev1.NodeStatus) (*corev1.Node, error) {
	cur := node.DeepCopy()
	var out *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur.Status = status(cur)
		updated, err := c.cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			out = updated
			return nil
		}
		if apierrors.IsConflict(err) {
			fresh, gerr := c.cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			cur = fresh
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update status of node %s: %w", node.Name, err)
	}
	return out, nil
}

// UpdatePodStatus posts the status that status(pod) returns through pods/status,
// starting from pod as last seen. status answers false when the pod needs no update
// (after a re-read on conflict it may not); then nothing is written and the returned
// pod is nil. A NotFound error means the pod is gone.
func (c *Client) UpdatePodStatus(ctx context.Context, pod *corev1.Pod, status func(*corev1.Pod) (corev1.PodStatus, bool)) (*corev1.Pod, error) {
	cur := pod.DeepCopy()
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		st, ok := status(cur)
		if !ok {
			return nil
		}
		cur.Status = st
		updated, err := c.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			out = updated
			return nil
		}
		if apierrors.IsConflict(err) {
			fresh, gerr := c.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			if fresh.UID != pod.UID {
				return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
			}
			cur = fresh
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return out, nil
}

// DeletePod removes a pod whose containers have stopped: at once (grace period 0),
// and only the pod of that uid. A pod already gone is not an error.
func (c *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	zero := int64(0)
	err := c.cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err == nil || apierrors.IsNotFound(err) || (apierrors.IsConflict(err) && uid != "") {
		// A conflict on the uid precondition means a new pod took the name.
		return nil
	}
	return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
}

// BoundToAnyNode selects pods bound to some node (spec.nodeName!=""): what a process
// running many nodes watches.
func BoundToAnyNode() fields.Selector { return fields.OneTermNotEqualSelector("spec.nodeName", "") }

// BoundTo selects the pods bound to one node, as the kubelet watches them.
func BoundTo(node string) fields.Selector { return fields.OneTermEqualSelector("spec.nodeName", node) }

// PodInformer is a shared informer on the pods of every namespace that sel selects.
// resync 0 disables periodic resync. The caller adds handlers and runs it.
func (c *Client) PodInformer(sel fields.Selector, resync time.Duration) cache.SharedIndexInformer {
	f := informers.NewSharedInformerFactoryWithOptions(c.cs, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = sel.String() }))
	return f.Core().V1().Pods().Informer()
}
