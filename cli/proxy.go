package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeactor/kubeactor/nodeagent/kubelet"
	"github.com/kubeactor/kubeactor/nodeagent/proxy"
)

// kubectl proxy's default filters: only local hosts, no exec or attach.
const (
	defaultAcceptHosts   = `^localhost$,^127\.0\.0\.1$,^\[::1\]$`
	defaultAcceptPaths   = `^.*`
	defaultRejectPaths   = `^/api/.*/pods/.*/exec,^/api/.*/pods/.*/attach`
	defaultRejectMethods = `^$`
)

// proxyCmd is kubectl proxy: a local HTTP server that forwards requests to the API
// server with the kubeconfig's credentials, and optionally serves static files.
type proxyCmd struct {
	clientFlags
	Port          int    `short:"p" name:"port" default:"8001" help:"The port to serve on; 0 picks a free port."`
	Address       string `name:"address" default:"127.0.0.1" help:"The IP address to serve on."`
	APIPrefix     string `name:"api-prefix" default:"/" help:"Prefix to serve the proxied API under."`
	WWW           string `name:"www" help:"Also serve static files from this directory under --www-prefix."`
	WWWPrefix     string `short:"P" name:"www-prefix" default:"/static/" help:"Prefix to serve static files under, when --www is given."`
	AcceptHosts   string `name:"accept-hosts" help:"Regular expressions (comma separated) of hosts to accept (default: localhost, 127.0.0.1, [::1])."`
	AcceptPaths   string `name:"accept-paths" help:"Regular expressions (comma separated) of paths to accept (default: all)."`
	RejectPaths   string `name:"reject-paths" help:"Regular expressions (comma separated) of paths to reject (default: pods' exec and attach)."`
	RejectMethods string `name:"reject-methods" help:"Regular expressions (comma separated) of HTTP methods to reject (default: none)."`
	DisableFilter bool   `name:"disable-filter" help:"Accept every host, path and method. Dangerous on a non-local address."`

	// With --proxy-mode, the command is the book's kube-proxy instead: the service
	// proxy of a node, on its own.
	ProxyMode   string `name:"proxy-mode" enum:",iptables,userspace" default:"" help:"Run the service proxy (kube-proxy) of this node instead: iptables or userspace."`
	Master      string `name:"master" help:"With --proxy-mode: the API server (default: the kubeconfig's)."`
	NodeName    string `name:"hostname-override" help:"With --proxy-mode: this node's name (default: the hostname)."`
	NodeIP      string `name:"bind-node-ip" help:"With --proxy-mode: this node's IP (default: the first non-loopback IPv4 address)."`
	ClusterCIDR string `name:"cluster-cidr" default:"10.244.0.0/16" help:"With --proxy-mode: the pods' address range (traffic from outside it is masqueraded)."`
}

func (c *proxyCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.ProxyMode != "" {
		return report(g.stderr, c.serviceProxy(ctx, g))
	}
	return report(g.stderr, c.run(ctx, g))
}

// serviceProxy runs the node's service proxy (kube-proxy) until ctx ends.
func (c *proxyCmd) serviceProxy(ctx context.Context, g *globals) error {
	if c.Master != "" {
		c.Server = c.Master
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cn.config)
	if err != nil {
		return err
	}
	name := c.NodeName
	if name == "" {
		if name, err = os.Hostname(); err != nil {
			return err
		}
		name = strings.ToLower(name)
	}
	ip := c.NodeIP
	if ip == "" {
		addr, err := kubelet.DefaultNodeIP()
		if err != nil {
			return err
		}
		ip = addr.String()
	}
	fmt.Fprintf(g.stdout, "Running the service proxy (%s mode) for node %s\n", c.ProxyMode, name)
	return proxy.Run(ctx, proxy.Config{Mode: c.ProxyMode, NodeName: name, NodeIP: ip, ClusterCIDR: c.ClusterCIDR}, cs, g.log.WithField("component", "proxy"))
}

func (c *proxyCmd) run(ctx context.Context, g *globals) error {
	cfg, err := c.restConfig()
	if err != nil {
		return err
	}
	target, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return fmt.Errorf("server address: %w", err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return fmt.Errorf("transport to %s: %w", target, err)
	}
	var filter *proxyFilter
	if !c.DisableFilter {
		if filter, err = c.filter(); err != nil {
			return err
		}
	}
	h, err := newProxyHandler(target, rt, c.APIPrefix, filter, c.WWW, c.WWWPrefix, g.log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Address, strconv.Itoa(c.Port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Fprintf(g.stdout, "Starting to serve on %s\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

func (c *proxyCmd) filter() (*proxyFilter, error) {
	orDefault := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	var f proxyFilter
	for _, spec := range []struct {
		into *[]*regexp.Regexp
		flag string
		v    string
	}{
		{&f.AcceptHosts, "accept-hosts", orDefault(c.AcceptHosts, defaultAcceptHosts)},
		{&f.AcceptPaths, "accept-paths", orDefault(c.AcceptPaths, defaultAcceptPaths)},
		{&f.RejectPaths, "reject-paths", orDefault(c.RejectPaths, defaultRejectPaths)},
		{&f.RejectMethods, "reject-methods", orDefault(c.RejectMethods, defaultRejectMethods)},
	} {
		res, err := compileRegexps(spec.v)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", spec.flag, err)
		}
		*spec.into = res
	}
	return &f, nil
}

func compileRegexps(list string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, s := range strings.Split(list, ",") {
		if s == "" {
			continue
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
	}
	return out, nil
}

// proxyFilter decides which requests the proxy forwards, as kubectl proxy's filter
// does: the host must match an accepted host, the path an accepted path and no
// rejected path, and the method no rejected method.
type proxyFilter struct {
	AcceptHosts, AcceptPaths, RejectPaths, RejectMethods []*regexp.Regexp
}

func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// allows says whether a request is forwarded and, if not, why.
func (f *proxyFilter) allows(method, host, urlPath string) (bool, string) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	switch {
	case !matchesAny(f.AcceptHosts, host):
		return false, "host not accepted: " + host
	case matchesAny(f.RejectMethods, method):
		return false, "method rejected: " + method
	case matchesAny(f.RejectPaths, urlPath) || !matchesAny(f.AcceptPaths, urlPath):
		return false, "path not accepted: " + urlPath
	}
	return true, ""
}

// proxyPath is where a request for reqPath goes on the server: reqPath without the
// API prefix, under the server URL's own path.
func proxyPath(serverPath, apiPrefix, reqPath string) string {
	rest := strings.TrimPrefix(reqPath, strings.TrimSuffix(apiPrefix, "/"))
	if !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	joined := path.Join("/", serverPath, rest)
	if strings.HasSuffix(rest, "/") && !strings.HasSuffix(joined, "/") {
		joined += "/"
	}
	return joined
}

// newProxyHandler serves the API under apiPrefix by forwarding to target with rt
// (which adds the credentials), flushing every write so that watches stream, and
// static files from www under wwwPrefix when www is set.
func newProxyHandler(target *url.URL, rt http.RoundTripper, apiPrefix string, filter *proxyFilter, www, wwwPrefix string, log *logrus.Logger) (http.Handler, error) {
	if !strings.HasPrefix(apiPrefix, "/") {
		apiPrefix = "/" + apiPrefix
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = target.Scheme
			pr.Out.URL.Host = target.Host
			pr.Out.URL.Path = proxyPath(target.Path, apiPrefix, pr.In.URL.Path)
			pr.Out.URL.RawPath = ""
			pr.Out.Host = target.Host
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.WithError(err).WithField("path", r.URL.Path).Warn("proxy request failed")
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	api := http.Handler(rp)
	if filter != nil {
		api = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ok, why := filter.allows(r.Method, r.Host, proxyPath("", apiPrefix, r.URL.Path)); !ok {
				log.WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path, "reason": why}).Warn("proxy request rejected")
				http.Error(w, "Forbidden", http.StatusForbidden)
				return
			}
			rp.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	if www != "" {
		if !strings.HasSuffix(wwwPrefix, "/") {
			wwwPrefix += "/"
		}
		mux.Handle(wwwPrefix, http.StripPrefix(wwwPrefix, http.FileServer(http.Dir(www))))
	}
	if !strings.HasSuffix(apiPrefix, "/") {
		mux.Handle(apiPrefix, api)
		apiPrefix += "/"
	}
	mux.Handle(apiPrefix, api)
	return mux, nil
}
