package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeactor/kubeactor/nodeagent/apiclient"
)

// clientFlags are kubectl's global flags, embedded in every client command. They are
// resolved through clientcmd exactly as kubectl resolves them: a flag wins over the
// kubeconfig's current context, which wins over the defaults.
type clientFlags struct {
	Server                string `short:"s" name:"server" help:"The address and port of the Kubernetes API server; several master replicas' separated by commas (the next is used when one cannot be reached)."`
	Kubeconfig            string `name:"kubeconfig" help:"Path to the kubeconfig file to use (default: $KUBECONFIG or ~/.kube/config)."`
	Context               string `name:"context" help:"The name of the kubeconfig context to use."`
	Cluster               string `name:"cluster" help:"The name of the kubeconfig cluster to use."`
	User                  string `name:"user" help:"The name of the kubeconfig user to use."`
	Namespace             string `short:"n" name:"namespace" help:"If present, the namespace scope for this request."`
	Token                 string `name:"token" help:"Bearer token for authentication to the API server."`
	Username              string `name:"username" help:"Username for basic authentication to the API server."`
	Password              string `name:"password" help:"Password for basic authentication to the API server."`
	CertificateAuthority  string `name:"certificate-authority" help:"Path to a cert file for the certificate authority."`
	ClientCertificate     string `name:"client-certificate" help:"Path to a client certificate file for TLS."`
	ClientKey             string `name:"client-key" help:"Path to a client key file for TLS."`
	InsecureSkipTLSVerify bool   `name:"insecure-skip-tls-verify" help:"Do not check the server's certificate."`
}

// loadingRules says which kubeconfig files are read: --kubeconfig, else $KUBECONFIG,
// else ~/.kube/config.
func (f *clientFlags) loadingRules() *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	return rules
}

// overrides turns the flags into clientcmd overrides; unset flags override nothing.
func (f *clientFlags) overrides() *clientcmd.ConfigOverrides {
	o := &clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults, CurrentContext: f.Context}
	o.ClusterInfo.Server = f.Server
	o.ClusterInfo.CertificateAuthority = f.CertificateAuthority
	o.ClusterInfo.InsecureSkipTLSVerify = f.InsecureSkipTLSVerify
	o.AuthInfo.Token = f.Token
	o.AuthInfo.Username = f.Username
	o.AuthInfo.Password = f.Password
	o.AuthInfo.ClientCertificate = f.ClientCertificate
	o.AuthInfo.ClientKey = f.ClientKey
	o.Context.Cluster = f.Cluster
	o.Context.AuthInfo = f.User
	o.Context.Namespace = f.Namespace
	return o
}

// clientConfig is the merged kubeconfig plus flags.
func (f *clientFlags) clientConfig() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(f.loadingRules(), f.overrides())
}

// restConfig is the resolved connection to the API server.
func (f *clientFlags) restConfig() (*rest.Config, error) {
	cfg, err := f.clientConfig().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load client config: %w", err)
	}
	if strings.Contains(cfg.Host, ",") {
		// Several servers (master replicas): the first, then the next when one
		// cannot be reached (a kubeconfig's server may list them too).
		servers, err := apiclient.Servers(cfg.Host)
		if err != nil {
			return nil, err
		}
		cfg.Host = servers[0]
		wrap := cfg.WrapTransport
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			if wrap != nil {
				rt = wrap(rt)
			}
			if f, err := apiclient.NewFailover(servers, rt); err == nil {
				return f
			}
			return rt
		}
	}
	return cfg, nil
}

// namespace is the namespace requests default to: -n, else the context's, else
// "default".
func (f *clientFlags) namespace() (string, error) {
	ns, _, err := f.clientConfig().Namespace()
	if err != nil {
		return "", fmt.Errorf("resolve namespace: %w", err)
	}
	return ns, nil
}

// conn is one client's view of the server: a REST client for core/v1 and discovery.
type conn struct {
	config    *rest.Config
	rest      *rest.RESTClient
	discovery *discovery.DiscoveryClient
	namespace string
}

func (f *clientFlags) connect() (*conn, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	ns, err := f.namespace()
	if err != nil {
		return nil, err
	}
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &corev1.SchemeGroupVersion
	rc.APIPath = "/api"
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if rc.UserAgent == "" {
		rc.UserAgent = "kubeactor/" + Version
	}
	client, err := rest.RESTClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("create REST client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	return &conn{config: cfg, rest: client, discovery: dc, namespace: ns}, nil
}

// doRaw sends req and returns the body; a Status answer becomes its StatusError
// (Result.Raw alone would give a generic error without the server's message).
func doRaw(ctx context.Context, req *rest.Request) ([]byte, error) {
	res := req.Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	return res.Raw()
}
