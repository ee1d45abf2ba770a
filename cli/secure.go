package cli

import (
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/config"
	"github.com/kubeactor/kubeactor/gateway/authn"
	"github.com/kubeactor/kubeactor/gateway/authz"
	"github.com/kubeactor/kubeactor/gateway/pki"
)

// security is what the secure port needs: its TLS configuration, the authenticator
// union and the authorizer. tls is nil when --secure-port is -1.
type security struct {
	tls   *tls.Config
	authn *authn.Union
	authz authz.Authorizer
	// ca is the CA of --cert-dir when it signs client certificates (no
	// --client-ca-file), so that `kubeactor up` can issue the admin's.
	ca *pki.CA
	// servingCA is the PEM of the CA that signed the serving certificate, when it is
	// the generated one (nil for --tls-cert-file).
	servingCA []byte
	// tokens signs service-account tokens (nil: no key, no tokens); rootCA is the
	// ca.crt of token secrets.
	tokens *authn.TokenSigner
	rootCA []byte
}

// newSecurity parses the token, basic-auth and policy files, loads or makes the
// certificates and loads the service-account keys; accounts is what the
// service-account token authenticator looks tokens up in. The files' contents were
// read by config.Server.Validate.
func newSecurity(cfg config.Server, accounts authn.AccountGetter, now time.Time) (*security, error) {
	sec := &security{authn: &authn.Union{AllowAnonymous: cfg.AnonymousAuth}}
	az, err := authz.New(cfg.AuthorizationMode, cfg.AuthorizationPolicy)
	if err != nil {
		return nil, fmt.Errorf("--authorization-policy-file: %w", err)
	}
	sec.authz = az
	if cfg.SecurePort < 0 {
		return sec, sec.serviceAccountKeys(cfg, nil, accounts)
	}
	dir := pki.Dir(cfg.CertDir)
	var ca *pki.CA
	if cfg.ClientCAFile == "" || cfg.TLSCertFile == "" {
		if ca, err = dir.EnsureCA(now); err != nil {
			return nil, fmt.Errorf("--cert-dir %s: %w", cfg.CertDir, err)
		}
	}
	clientCA := cfg.ClientCA
	if clientCA == nil {
		clientCA, sec.ca = ca.CertPEM, ca
	}
	roots, err := pki.Pool(clientCA)
	if err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	sec.authn.Members = append(sec.authn.Members, authn.X509{Roots: roots})
	if cfg.TokenAuth != nil {
		f, err := authn.ParseTokenFile(cfg.TokenAuth)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		sec.authn.Members = append(sec.authn.Members, f)
	}
	if cfg.BasicAuth != nil {
		f, err := authn.ParseBasicFile(cfg.BasicAuth)
		if err != nil {
			return nil, fmt.Errorf("--basic-auth-file: %w", err)
		}
		sec.authn.Members = append(sec.authn.Members, f)
	}

	certFile, keyFile := cfg.TLSCertFile, cfg.TLSPrivateKeyFile
	if certFile == "" {
		hosts, ips := servingNames(cfg)
		if certFile, keyFile, err = dir.EnsureServing(ca, hosts, ips, now); err != nil {
			return nil, fmt.Errorf("--cert-dir %s: %w", cfg.CertDir, err)
		}
		sec.servingCA = ca.CertPEM
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	servingKey, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving key: %w", err)
	}
	if err := sec.serviceAccountKeys(cfg, servingKey, accounts); err != nil {
		return nil, err
	}
	// Client certificates are asked for, not required: a token or a password works
	// too, and a certificate the CA did not sign gets a 401 Status, not a failed
	// handshake.
	sec.tls = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
	return sec, nil
}

// serviceAccountKeys loads the key that signs service-account tokens
// (--service-account-private-key-file, else the serving key) and the keys that verify
// them (--service-account-key-file, else the signing key's public half), and adds the
// token authenticator to the union. Without any key no tokens are made or accepted.
func (sec *security) serviceAccountKeys(cfg config.Server, servingKey []byte, accounts authn.AccountGetter) error {
	sec.rootCA = cfg.RootCA
	if sec.rootCA == nil {
		sec.rootCA = sec.servingCA
	}
	var public []crypto.PublicKey
	if priv := cfg.ServiceAccountPrivateKey; priv != nil || servingKey != nil {
		flag := "--service-account-private-key-file"
		if priv == nil {
			priv, flag = servingKey, "serving key"
		}
		key, err := authn.ParsePrivateKey(priv)
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		if sec.tokens, err = authn.NewTokenSigner(key); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		public = []crypto.PublicKey{key.Public()}
	}
	if cfg.ServiceAccountKey != nil {
		keys, err := authn.ParsePublicKeys(cfg.ServiceAccountKey)
		if err != nil {
			return fmt.Errorf("--service-account-key-file: %w", err)
		}
		public = keys
	}
	if len(public) > 0 {
		sec.authn.Members = append(sec.authn.Members, &authn.ServiceAccountTokens{Keys: public, Lookup: cfg.ServiceAccountLookup, Getter: accounts})
	}
	return nil
}

// serviceAccountOptions are the token controller's options: nil signer, no tokens.
func (sec *security) serviceAccountOptions() *serviceaccount.Options {
	opts := &serviceaccount.Options{RootCA: sec.rootCA}
	if sec.tokens != nil {
		opts.Tokens = sec.tokens
	}
	return opts
}

// servingNames are the names and addresses of the generated serving certificate:
// this machine's, the kubernetes service's names and the first service IP.
func servingNames(cfg config.Server) ([]string, []net.IP) {
	hosts := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + cfg.ClusterDomain}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append([]string{h}, hosts...)
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if r, err := cfg.ClusterIPRange(); err == nil {
		ips = append(ips, net.IP(r.Addr().Next().AsSlice()))
	}
	for _, a := range []string{cfg.AdvertiseAddress, cfg.BindAddress} {
		if ip := net.ParseIP(a); ip != nil && !ip.IsUnspecified() {
			ips = append(ips, ip)
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				ips = append(ips, n.IP)
			}
		}
	}
	return hosts, ips
}

// AdminKubeconfigFile is the kubeconfig `kubeactor up` writes in --cert-dir.
const AdminKubeconfigFile = "admin.kubeconfig"

// writeAdminKubeconfig writes a kubeconfig for the secure port at secureAddr: an
// admin client certificate (CN admin, O system:masters) signed by the CA of
// --cert-dir, and that CA when it signed the serving certificate. It writes nothing
// (and says why) when the server does not sign client certificates itself.
func writeAdminKubeconfig(cfg config.Server, sec *security, secureAddr string, now time.Time) (string, error) {
	if sec.ca == nil {
		return "", fmt.Errorf("no admin kubeconfig: client certificates are signed by --client-ca-file, not by the CA in --cert-dir")
	}
	certPEM, keyPEM, err := sec.ca.Client("admin", []string{"system:masters"}, now)
	if err != nil {
		return "", err
	}
	_, port, err := net.SplitHostPort(secureAddr)
	if err != nil {
		return "", err
	}
	host := "127.0.0.1"
	if ip := net.ParseIP(cfg.BindAddress); ip != nil && !ip.IsUnspecified() {
		host = ip.String()
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubeactor"] = &clientcmdapi.Cluster{Server: "https://" + net.JoinHostPort(host, port), CertificateAuthorityData: sec.servingCA}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	kc.Contexts["kubeactor"] = &clientcmdapi.Context{Cluster: "kubeactor", AuthInfo: "admin"}
	kc.CurrentContext = "kubeactor"
	path := filepath.Join(cfg.CertDir, AdminKubeconfigFile)
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// securePort is the running HTTPS server (nil when --secure-port is -1).
type securePort struct {
	srv *http.Server
	ln  net.Listener
	sec *security
}

// listenSecure opens the secure port's listener (nil when --secure-port is -1);
// serve starts serving it.
func listenSecure(cfg config.Server, sec *security) (*securePort, error) {
	if sec.tls == nil {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.SecureAddress())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.SecureAddress(), err)
	}
	return &securePort{ln: ln, sec: sec}, nil
}

func (p *securePort) serve(h http.Handler, errc chan<- error) {
	if p == nil {
		return
	}
	p.srv = &http.Server{Handler: h, TLSConfig: p.sec.tls, ErrorLog: stdlog.New(io.Discard, "", 0)}
	go func() {
		if err := p.srv.ServeTLS(p.ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
}

// close closes a listener that was never served.
func (p *securePort) close() {
	if p != nil && p.srv == nil {
		_ = p.ln.Close()
	}
}

// address is the listening address, "" when off.
func (p *securePort) address() string {
	if p == nil {
		return ""
	}
	return p.ln.Addr().String()
}

func (p *securePort) shutdown(ctx context.Context) error {
	if p == nil || p.srv == nil {
		return nil
	}
	return p.srv.Shutdown(ctx)
}

// printKubeconfig writes the admin kubeconfig and tells how to use it.
func (p *securePort) printKubeconfig(out io.Writer, cfg config.Server, log logrus.FieldLogger) {
	if p == nil {
		return
	}
	path, err := writeAdminKubeconfig(cfg, p.sec, p.address(), time.Now())
	if err != nil {
		log.WithError(err).Warn("no admin kubeconfig")
		fmt.Fprintf(out, "secure API at https://%s\n", p.address())
		return
	}
	fmt.Fprintf(out, "secure API at https://%s; admin kubeconfig: %s\n", p.address(), path)
	fmt.Fprintf(out, "try: kubectl --kubeconfig %s get nodes,pods   (or: export KUBECONFIG=%s)\n", path, path)
}
