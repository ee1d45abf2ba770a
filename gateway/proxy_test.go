package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	utilexec "k8s.io/utils/exec"

	"github.com/kubeactor/kubeactor/nodeagent/server"
	"github.com/kubeactor/kubeactor/nodeagent/server/servertest"
	"github.com/kubeactor/kubeactor/nodeagent/server/streamclient"
)

// proxyWorld is a gateway with one node whose agent is the real agent server on
// fakes, a pod "web" on it whose address is 127.0.0.1 (a local HTTP server stands in
// for its port), a two-container pod "duo", a service "svc" with one endpoint and a
// service "empty" without.
type proxyWorld struct {
	h        *harness
	feed     chan string
	backend  int // the pod's HTTP port
	echoPort int // a TCP echo server for port-forward
}

func portOf(t testing.TB, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

func newProxyWorld(t *testing.T) *proxyWorld {
	t.Helper()
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)

	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend %s %s?%s", r.Method, r.URL.Path, r.URL.RawQuery)
	}))
	t.Cleanup(backend.Close)
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()

	feed := make(chan string)
	rt := servertest.NewRuntime(
		&servertest.Container{ID: "c-web", Log: "one\ntwo\nthree\n", Feed: feed},
		&servertest.Container{ID: "c-duo-a", Log: "from a\n"},
	)
	host := &servertest.Host{
		IDs: map[string][]string{"default/web/nginx": {"c-web"}, "default/duo/a": {"c-duo-a"}},
		IPs: map[string]string{"default/web": "127.0.0.1"},
	}
	agent := httptest.NewServer(server.New(server.Config{NodeName: "n1", Runtime: rt, Host: host}).Handler())
	t.Cleanup(func() { agent.CloseClientConnections(); agent.Close() })

	// A closed port: the agent of node "dead" is unreachable.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := portOf(t, dead.Addr().String())
	dead.Close()

	for name, port := range map[string]int{"n1": portOf(t, agent.Listener.Addr().String()), "dead": deadPort} {
		if _, err := h.client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create node: %v", err)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := h.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}}
			if name == "n1" {
				n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "192.0.2.10"})
			}
			n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
			_, err = h.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("node status: %v", err)
		}
	}
	pods := []*corev1.Pod{
		newPod("web").node("n1").obj(),
		{ObjectMeta: metav1.ObjectMeta{Name: "duo", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "n1",
			Containers: []corev1.Container{{Name: "a", Image: "i"}, {Name: "b", Image: "i"}}}},
		newPod("far").node("dead").obj(),
		newPod("pending").obj(),
	}
	pods[0].Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: int32(portOf(t, backend.Listener.Addr().String()))}}
	for _, p := range pods {
		if _, err := h.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := h.client.CoreV1().Pods("default").Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Status.PodIP = "127.0.0.1"
			_, err = h.client.CoreV1().Pods("default").UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("pod status: %v", err)
		}
	}
	for _, name := range []string{"svc", "empty"} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
		if _, err := h.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create service: %v", err)
		}
	}
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "default"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}},
		Ports:     []corev1.EndpointPort{{Name: "http", Port: int32(portOf(t, backend.Listener.Addr().String()))}},
	}}}
	if _, err := h.client.CoreV1().Endpoints("default").Create(ctx, ep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create endpoints: %v", err)
	}
	return &proxyWorld{h: h, feed: feed, backend: portOf(t, backend.Listener.Addr().String()), echoPort: portOf(t, echo.Addr().String())}
}

func TestProxyPaths(t *testing.T) {
	w := newProxyWorld(t)
	bp := strconv.Itoa(w.backend)
	tests := []struct {
		name, method, path string
		code               int
		want               string // substring of the body
	}{
		{"log", "GET", "/api/v1/namespaces/default/pods/web/log", 200, "one\ntwo\nthree\n"},
		{"log tail and container", "GET", "/api/v1/namespaces/default/pods/web/log?container=nginx&tailLines=1", 200, "three\n"},
		{"log of one of two", "GET", "/api/v1/namespaces/default/pods/duo/log?container=a", 200, "from a\n"},
		{"log needs a container", "GET", "/api/v1/namespaces/default/pods/duo/log", 400, "a container name must be specified for pod duo, choose one of: [a b]"},
		{"log of an unknown container", "GET", "/api/v1/namespaces/default/pods/web/log?container=x", 400, "container x is not valid for pod web"},
		{"log of an unbound pod", "GET", "/api/v1/namespaces/default/pods/pending/log", 400, "pod pending does not have a host assigned"},
		{"log of a container not started", "GET", "/api/v1/namespaces/default/pods/duo/log?container=b", 404, "container b not found"},
		{"log previous missing", "GET", "/api/v1/namespaces/default/pods/web/log?previous=true", 404, "previous terminated container nginx not found"},
		{"log agent unreachable", "GET", "/api/v1/namespaces/default/pods/far/log", 503, "cannot reach the node agent of dead"},
		{"log of a missing pod", "GET", "/api/v1/namespaces/default/pods/nope/log", 404, `pods "nope" not found`},
		{"attach to an unknown container", "POST", "/api/v1/namespaces/default/pods/web/attach?container=x&stdout=true", 400, "container x is not valid for pod web"},
		{"attach to an unbound pod", "POST", "/api/v1/namespaces/default/pods/pending/attach?stdout=true", 400, "pod pending does not have a host assigned"},
		{"node proxy healthz", "GET", "/api/v1/proxy/nodes/n1/healthz", 200, "ok"},
		{"node proxy pods", "GET", "/api/v1/proxy/nodes/n1/pods", 200, `"kind":"PodList"`},
		{"node proxy spec", "GET", "/api/v1/nodes/n1/proxy/spec", 200, `"num_cores"`},
		{"node proxy stats", "GET", "/api/v1/nodes/n1/proxy/stats", 200, `"node":"n1"`},
		{"node proxy by address", "GET", "/api/v1/proxy/nodes/192.0.2.10/healthz", 200, "ok"},
		{"node proxy unreachable", "GET", "/api/v1/proxy/nodes/dead/healthz", 503, "error trying to reach"},
		{"node proxy missing", "GET", "/api/v1/proxy/nodes/nope/healthz", 404, `nodes "nope" not found`},
		{"pod proxy", "GET", "/api/v1/namespaces/default/pods/web/proxy/hello?x=1", 200, "backend GET /hello?x=1"},
		{"pod proxy with port", "POST", "/api/v1/namespaces/default/pods/web:" + bp + "/proxy/a/b", 200, "backend POST /a/b?"},
		{"pod proxy named port", "GET", "/api/v1/namespaces/default/pods/web:web/proxy/", 200, "backend GET /?"},
		{"legacy pod proxy", "GET", "/api/v1/proxy/namespaces/default/pods/web/hello", 200, "backend GET /hello?"},
		{"legacy pod proxy with port", "GET", "/api/v1/proxy/namespaces/default/pods/web:" + bp + "/x", 200, "backend GET /x?"},
		{"service proxy", "GET", "/api/v1/namespaces/default/services/svc/proxy/helloWorld", 200, "backend GET /helloWorld?"},
		{"service proxy named port", "GET", "/api/v1/namespaces/default/services/svc:http/proxy/", 200, "backend GET /?"},
		{"legacy service proxy", "GET", "/api/v1/proxy/namespaces/default/services/svc/helloWorld", 200, "backend GET /helloWorld?"},
		{"service without endpoints", "GET", "/api/v1/proxy/namespaces/default/services/empty/", 503, `no endpoints available for service "empty"`},
		{"service port unknown", "GET", "/api/v1/namespaces/default/services/svc:nope/proxy/", 400, `no service port "nope"`},
		{"legacy proxy bad path", "GET", "/api/v1/proxy/widgets/x", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := w.h.do(tt.method, tt.path, "", "")
			if code >= 400 {
				var st metav1.Status
				if err := json.Unmarshal([]byte(body), &st); err != nil || st.Kind != "Status" || int(st.Code) != code {
					t.Fatalf("not a Status: %v: %s", err, body)
				}
				body = st.Message
			}
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Fatalf("code %d body %q; want %d with %q", code, body, tt.code, tt.want)
			}
		})
	}
}

func TestProxyLogFollowStreams(t *testing.T) {
	w := newProxyWorld(t)
	tail := int64(0)
	rc, err := w.h.client.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{Follow: true, TailLines: &tail}).Stream(testCtx(t))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	defer rc.Close()
	r := bufio.NewReader(rc)
	for _, line := range []string{"live 1\n", "live 2\n"} {
		w.feed <- line // taken only once the agent is following
		got, err := r.ReadString('\n')
		if err != nil || got != line {
			t.Fatalf("read %q, %v; want %q", got, err, line)
		}
	}
	close(w.feed)
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("after the container stopped: %q, %v", rest, err)
	}
}

func TestProxyExec(t *testing.T) {
	w := newProxyWorld(t)
	tests := []struct {
		name           string
		cmd            []string
		stdin          string
		stdout, stderr string
		code           int
	}{
		{"stdout", []string{"echo", "hello"}, "", "hello\n", "", 0},
		{"stderr apart", []string{"warn", "careful"}, "", "", "careful\n", 0},
		{"stdin", []string{"cat"}, "typed\n", "typed\n", "", 0},
		{"non-zero exit", []string{"exit", "42"}, "", "", "exiting with 42\n", 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := w.h.client.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("web").SubResource("exec").
				VersionedParams(&corev1.PodExecOptions{Command: tt.cmd, Stdin: tt.stdin != "", Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
			d, err := streamclient.NewDialer(w.h.config, "POST", u)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			opts := streamclient.ExecOptions{Stdout: &stdout, Stderr: &stderr}
			if tt.stdin != "" {
				opts.Stdin = strings.NewReader(tt.stdin)
			}
			err = streamclient.Exec(testCtx(t), d, opts)
			var exit utilexec.ExitError
			switch {
			case tt.code == 0 && err != nil:
				t.Fatalf("exec: %v", err)
			case tt.code != 0 && (!errors.As(err, &exit) || exit.ExitStatus() != tt.code):
				t.Fatalf("exec error %v, want exit code %d", err, tt.code)
			}
			if stdout.String() != tt.stdout || stderr.String() != tt.stderr {
				t.Fatalf("stdout %q stderr %q; want %q %q", stdout.String(), stderr.String(), tt.stdout, tt.stderr)
			}
		})
	}
}

func TestProxyPortForward(t *testing.T) {
	w := newProxyWorld(t)
	u := w.h.client.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("web").SubResource("portforward").URL()
	d, err := streamclient.NewDialer(w.h.config, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		done <- streamclient.PortForward(ctx, d, []streamclient.Forward{{Listener: ln, Remote: uint16(w.echoPort)}}, io.Discard)
	}()
	for _, msg := range []string{"through the gateway", "and again"} {
		t.Run(msg, func(t *testing.T) {
			servertest.EchoRoundTrip(t, ln.Addr().String(), msg)
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("port-forward: %v", err)
	}
}

func TestAgentHost(t *testing.T) {
	tests := []struct {
		name string
		node corev1.Node
		want string
	}{
		{"internal ip and port", corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "h"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 1234}}}}, "10.0.0.1:1234"},
		{"hostname, default port", corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "h"}}}}, "h:10250"},
		{"name", corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, "n:10250"},
		{"ipv6", corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "fd00::1"}}}}, "[fd00::1]:10250"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agentHost(&tt.node); got != tt.want {
				t.Fatalf("agentHost = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseLegacyProxy(t *testing.T) {
	tests := []struct {
		in   string
		want legacyProxy
		ok   bool
	}{
		{"nodes/n1", legacyProxy{"nodes", "", "n1", "/"}, true},
		{"nodes/n1/stats/x", legacyProxy{"nodes", "", "n1", "/stats/x"}, true},
		{"namespaces/ns/pods/p:80/a/b", legacyProxy{"pods", "ns", "p:80", "/a/b"}, true},
		{"namespaces/ns/services/s", legacyProxy{"services", "ns", "s", "/"}, true},
		{"namespaces/ns/widgets/s", legacyProxy{}, false},
		{"nodes/", legacyProxy{}, false},
		{"", legacyProxy{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseLegacyProxy(tt.in)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
