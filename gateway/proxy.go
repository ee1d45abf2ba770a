package gateway

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"
)

// defaultAgentPort is the node agent's port when a Node does not report one.
const defaultAgentPort = 10250

// agentTransport carries the requests to node agents and pods; upgrades (exec,
// port-forward) pass through it too.
var agentTransport = &http.Transport{
	Proxy:                 nil,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConnsPerHost:   8,
	IdleConnTimeout:       90 * time.Second,
	ResponseHeaderTimeout: 60 * time.Second,
}

// agentHost is where a node's agent listens: its InternalIP, else its Hostname
// address, else its name; and its daemon port, else 10250.
func agentHost(node *corev1.Node) string {
	host := node.Name
	for _, want := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type == want && a.Address != "" {
				host = a.Address
				break
			}
		}
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = defaultAgentPort
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// podContainer picks the container a log or exec request means, with the real
// server's messages when it cannot.
func podContainer(pod *corev1.Pod, name string) (string, error) {
	if name == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have any containers", pod.Name))
		}
		names := make([]string, len(pod.Spec.Containers))
		for i, c := range pod.Spec.Containers {
			names[i] = c.Name
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names))
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return name, nil
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// podPort is the pod port a proxy request means: a number, a container port's
// name, or "" for the first container port (else 80).
func podPort(pod *corev1.Pod, port string) (int, error) {
	if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65536 {
		return n, nil
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if port == "" || p.Name == port {
				return int(p.ContainerPort), nil
			}
		}
	}
	if port == "" {
		return 80, nil
	}
	return 0, apierrors.NewBadRequest(fmt.Sprintf("no port %q in pod %s", port, pod.Name))
}

// serviceTarget is one ready endpoint of the service's port (a number, a port name,
// or "" for the first port).
func serviceTarget(svc *corev1.Service, ep *corev1.Endpoints, port string) (string, error) {
	if len(svc.Spec.Ports) == 0 {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svc.Name))
	}
	sp := svc.Spec.Ports[0]
	if port != "" {
		found := false
		for _, p := range svc.Spec.Ports {
			if p.Name == port || strconv.Itoa(int(p.Port)) == port {
				sp, found = p, true
				break
			}
		}
		if !found {
			return "", apierrors.NewBadRequest(fmt.Sprintf("no service port %q found for service %q", port, svc.Name))
		}
	}
	if ep != nil {
		for _, ss := range ep.Subsets {
			for _, p := range ss.Ports {
				if p.Name != sp.Name || len(ss.Addresses) == 0 {
					continue
				}
				return net.JoinHostPort(ss.Addresses[0].IP, strconv.Itoa(int(p.Port))), nil
			}
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svc.Name))
}

// legacyProxy is a parsed /api/v1/proxy/... path.
type legacyProxy struct {
	resource, namespace, name, path string
}

// parseLegacyProxy reads nodes/{name}/..., namespaces/{ns}/pods/{name}/... and
// namespaces/{ns}/services/{name}/....
func parseLegacyProxy(rest string) (legacyProxy, bool) {
	parts := strings.SplitN(strings.TrimPrefix(rest, "/"), "/", 5)
	var lp legacyProxy
	var tail []string
	switch {
	case len(parts) >= 2 && parts[0] == "nodes":
		lp.resource, lp.name, tail = "nodes", parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "namespaces" && (parts[2] == "pods" || parts[2] == "services"):
		lp.resource, lp.namespace, lp.name, tail = parts[2], parts[1], parts[3], parts[4:]
	default:
		return lp, false
	}
	if lp.name == "" || (lp.resource != "nodes" && lp.namespace == "") {
		return lp, false
	}
	lp.path = "/" + strings.Join(tail, "/")
	return lp, true
}

// getTyped reads one stored object of resource res.
func getTyped[T any](s *Server, res, namespace, name string) (T, error) {
	var zero T
	it, err := s.store.Get(persistence.Key{Resource: res, Namespace: namespace, Name: name})
	if err != nil {
		return zero, fmt.Errorf("get %s %s: %w", res, name, err)
	}
	obj, ok := it.Object().(T)
	if !ok {
		return zero, fmt.Errorf("get %s %s: stored a %T", res, name, it.Object())
	}
	return obj, nil
}

// nodeFor finds a node by name, or by one of its addresses (the book's
// /api/v1/proxy/nodes/{name-or-ip}).
func (s *Server) nodeFor(name string) (*corev1.Node, error) {
	node, err := getTyped[*corev1.Node](s, "nodes", "", name)
	if err == nil || !errors.Is(err, persistence.ErrNotFound) || net.ParseIP(name) == nil {
		return node, err
	}
	var found *corev1.Node
	s.store.Snapshot("nodes").Ascend("", "", func(it *persistence.Item) bool {
		n, ok := it.Object().(*corev1.Node)
		if !ok {
			return true
		}
		for _, a := range n.Status.Addresses {
			if a.Address == name {
				found = n
				return false
			}
		}
		return true
	})
	if found == nil {
		return nil, err
	}
	return found, nil
}

// podNode is the node a pod runs on, 400 when it has none.
func (s *Server) podNode(pod *corev1.Pod) (*corev1.Node, error) {
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	node, err := getTyped[*corev1.Node](s, "nodes", "", pod.Spec.NodeName)
	if errors.Is(err, persistence.ErrNotFound) {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("node %q of pod %s is not registered", pod.Spec.NodeName, pod.Name))
	}
	return node, err
}

// streaming answers the subresources served by node agents and pods: log, exec,
// attach, portforward and proxy.
func (s *Server) streaming(c echo.Context, rq *request) error {
	switch {
	case rq.res.Kind == "Pod" && rq.sub == "log":
		return s.podLog(c, rq)
	case rq.res.Kind == "Pod" && (rq.sub == "exec" || rq.sub == "attach" || rq.sub == "portforward"):
		return s.podStream(c, rq)
	case rq.sub == "proxy":
		return s.proxyTo(c, rq.res.Name, rq.namespace, rq.name, "/"+c.Param("*"))
	}
	return echo.ErrNotFound
}

// legacyProxyRoute answers /api/v1/proxy/{nodes|namespaces/{ns}/pods|services}/...
func (s *Server) legacyProxyRoute(c echo.Context) error {
	lp, ok := parseLegacyProxy(c.Param("*"))
	if !ok {
		return echo.ErrNotFound
	}
	if r, ok := kinds.Lookup(lp.resource); ok {
		c.Set(requestKey, &request{res: r, namespace: lp.namespace, name: lp.name, sub: "proxy"})
	}
	return s.proxyTo(c, lp.resource, lp.namespace, lp.name, lp.path)
}

// proxyTo forwards the request to a node agent, a pod or a service endpoint. name
// may carry a scheme and a port: [scheme:]name[:port].
func (s *Server) proxyTo(c echo.Context, res, namespace, nameWithPort, path string) error {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(nameWithPort)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid name %q", nameWithPort))
	}
	if scheme == "" {
		scheme = "http"
	}
	var host string
	switch res {
	case "nodes":
		node, err := s.nodeFor(name)
		if err != nil {
			return err
		}
		host = agentHost(node)
		if port != "" {
			h, _, _ := net.SplitHostPort(host)
			host = net.JoinHostPort(h, port)
		}
	case "pods":
		pod, err := getTyped[*corev1.Pod](s, "pods", namespace, name)
		if err != nil {
			return err
		}
		if pod.Status.PodIP == "" {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("pod %s has no IP address yet", name))
		}
		n, err := podPort(pod, port)
		if err != nil {
			return err
		}
		host = net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(n))
	case "services":
		svc, err := getTyped[*corev1.Service](s, "services", namespace, name)
		if err != nil {
			return err
		}
		ep, err := getTyped[*corev1.Endpoints](s, "endpoints", namespace, name)
		if err != nil && !errors.Is(err, persistence.ErrNotFound) {
			return err
		}
		if host, err = serviceTarget(svc, ep, port); err != nil {
			return err
		}
	default:
		return echo.ErrNotFound
	}
	target := &url.URL{Scheme: scheme, Host: host, Path: path, RawQuery: c.Request().URL.RawQuery}
	s.reverseProxy(c, target)
	return nil
}

// podStream forwards exec, attach and portforward to the pod's node agent; the
// upgrade (SPDY or WebSocket) passes through.
func (s *Server) podStream(c echo.Context, rq *request) error {
	pod, err := getTyped[*corev1.Pod](s, "pods", rq.namespace, rq.name)
	if err != nil {
		return err
	}
	node, err := s.podNode(pod)
	if err != nil {
		return err
	}
	q := c.Request().URL.Query()
	target := &url.URL{Scheme: "http", Host: agentHost(node)}
	if rq.sub == "portforward" {
		target.Path = "/portForward/" + pod.Namespace + "/" + pod.Name
		target.RawQuery = q.Encode()
	} else {
		// The agent's exec and attach speak SPDY (and WebSocket up to v4, not
		// kubectl's v5): refuse WebSocket here, so clients fall back to SPDY at once.
		if strings.EqualFold(c.Request().Header.Get("Upgrade"), "websocket") {
			return apierrors.NewBadRequest(rq.sub + " over WebSocket is not supported by the node agent; use SPDY")
		}
		container, err := podContainer(pod, q.Get("container"))
		if err != nil {
			return err
		}
		target.Path = "/" + rq.sub + "/" + pod.Namespace + "/" + pod.Name + "/" + container
		target.RawQuery = agentExecQuery(q).Encode()
	}
	s.reverseProxy(c, target)
	return nil
}

// agentExecQuery turns the API's exec options (stdin=true, ...) into the agent's
// (input=1, ...).
func agentExecQuery(q url.Values) url.Values {
	out := url.Values{"command": q["command"]}
	for api, agent := range map[string]string{"stdin": "input", "stdout": "output", "stderr": "error", "tty": "tty"} {
		if b, err := strconv.ParseBool(q.Get(api)); err == nil && b {
			out.Set(agent, "1")
		}
	}
	return out
}

// reverseProxy sends the request to target and copies the answer back, flushing as
// it comes; an upgrade becomes a two-way pipe.
func (s *Server) reverseProxy(c echo.Context, target *url.URL) {
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = target.Host
			pr.Out.Header.Del("Authorization") // the caller's credentials are for this server
		},
		Transport:     agentTransport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.handleError(apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach %s: %v", target.Host, err)), c)
		},
	}
	rp.ServeHTTP(c.Response(), c.Request())
}

// logParams are the query parameters a log request passes to the agent.
var logParams = []string{"follow", "previous", "tailLines", "timestamps", "sinceSeconds", "sinceTime", "limitBytes"}

// podLog answers GET pods/{name}/log: the container's output from its node agent,
// streamed as it arrives.
func (s *Server) podLog(c echo.Context, rq *request) error {
	pod, err := getTyped[*corev1.Pod](s, "pods", rq.namespace, rq.name)
	if err != nil {
		return err
	}
	q := c.Request().URL.Query()
	container, err := podContainer(pod, q.Get("container"))
	if err != nil {
		return err
	}
	node, err := s.podNode(pod)
	if err != nil {
		return err
	}
	out := url.Values{}
	for _, p := range logParams {
		if v := q.Get(p); v != "" {
			out.Set(p, v)
		}
	}
	target := url.URL{Scheme: "http", Host: agentHost(node), Path: "/containerLogs/" + pod.Namespace + "/" + pod.Name + "/" + container, RawQuery: out.Encode()}
	req, err := http.NewRequestWithContext(c.Request().Context(), http.MethodGet, target.String(), nil)
	if err != nil {
		return fmt.Errorf("log request: %w", err)
	}
	resp, err := agentTransport.RoundTrip(req)
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("cannot reach the node agent of %s at %s: %v", node.Name, target.Host, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return agentError(resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the client went away
			}
			w.Flush()
		}
		if err != nil {
			return nil // the agent ended the stream (or failed mid-way: nothing more to say)
		}
	}
}

// agentError is the Status for an agent's failed answer.
func agentError(code int, msg string) error {
	reason := metav1.StatusReasonInternalError
	switch code {
	case http.StatusBadRequest:
		reason = metav1.StatusReasonBadRequest
	case http.StatusNotFound:
		reason = metav1.StatusReasonNotFound
	case http.StatusServiceUnavailable:
		reason = metav1.StatusReasonServiceUnavailable
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg}}
}
