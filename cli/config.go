package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
)

// configCmd is `kubectl config`: it reads and writes kubeconfig files through
// clientcmd, with kubectl's loading rules (--kubeconfig, $KUBECONFIG, ~/.kube/config).
type configCmd struct {
	View           configViewCmd           `cmd:"" help:"Display merged kubeconfig settings or a specified kubeconfig file."`
	CurrentContext configCurrentContextCmd `cmd:"" name:"current-context" help:"Display the current-context."`
	UseContext     configUseContextCmd     `cmd:"" name:"use-context" help:"Set the current-context in a kubeconfig file."`
	SetCluster     configSetClusterCmd     `cmd:"" name:"set-cluster" help:"Set a cluster entry in kubeconfig."`
	SetContext     configSetContextCmd     `cmd:"" name:"set-context" help:"Set a context entry in kubeconfig."`
	SetCredentials configSetCredentialsCmd `cmd:"" name:"set-credentials" help:"Set a user entry in kubeconfig."`
}

// kubeconfigFlag is the one global flag the config commands take.
type kubeconfigFlag struct {
	Kubeconfig string `name:"kubeconfig" help:"Use a particular kubeconfig file (default: $KUBECONFIG or ~/.kube/config)."`
}

// access is where the config is read from and written to, as kubectl's
// clientcmd.PathOptions resolves it.
func (k kubeconfigFlag) access() clientcmd.ConfigAccess {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.Kubeconfig
	return rules
}

// modify loads the starting config, applies change and writes it back with
// clientcmd.ModifyConfig (which writes each stanza to the file it came from).
func (k kubeconfigFlag) modify(change func(*clientcmdapi.Config) error) error {
	access := k.access()
	cfg, err := access.GetStartingConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	if err := change(cfg); err != nil {
		return err
	}
	if err := clientcmd.ModifyConfig(access, *cfg, true); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

type configViewCmd struct {
	kubeconfigFlag
	Minify  bool   `name:"minify" help:"Remove all information not used by current-context from the output."`
	Raw     bool   `name:"raw" help:"Display raw byte data and sensitive data."`
	Flatten bool   `name:"flatten" help:"Flatten the resulting kubeconfig file into self-contained output."`
	Output  string `short:"o" name:"output" default:"yaml" help:"Output format: yaml|json."`
}

func (c *configViewCmd) Run(g *globals) error {
	return report(g.stderr, c.run(g.stdout))
}

func (c *configViewCmd) run(out io.Writer) error {
	var p printers.ResourcePrinter
	switch c.Output {
	case "yaml":
		p = &printers.YAMLPrinter{}
	case "json":
		p = &printers.JSONPrinter{}
	default:
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", c.Output)
	}
	cfg, err := c.access().GetStartingConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	if c.Minify {
		if err := clientcmdapi.MinifyConfig(cfg); err != nil {
			return fmt.Errorf("minify: %w", err)
		}
	}
	if c.Flatten {
		if err := clientcmdapi.FlattenConfig(cfg); err != nil {
			return fmt.Errorf("flatten: %w", err)
		}
	} else if !c.Raw {
		// Secrets become REDACTED, then raw data DATA+OMITTED, as in kubectl.
		if err := clientcmdapi.RedactSecrets(cfg); err != nil {
			return fmt.Errorf("redact: %w", err)
		}
		clientcmdapi.ShortenConfig(cfg)
	}
	obj, err := latest.Scheme.ConvertToVersion(cfg, latest.ExternalVersion)
	if err != nil {
		return fmt.Errorf("convert kubeconfig: %w", err)
	}
	if c.Output == "json" { // in the typed field order, as kubectl prints it
		if err := p.PrintObj(obj, out); err != nil {
			return fmt.Errorf("print kubeconfig: %w", err)
		}
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("convert kubeconfig: %w", err)
	}
	if _, ok := m["preferences"]; !ok {
		m["preferences"] = map[string]interface{}{} // kubectl prints preferences: {}
	}
	if err := p.PrintObj(&unstructured.Unstructured{Object: m}, out); err != nil {
		return fmt.Errorf("print kubeconfig: %w", err)
	}
	return nil
}

type configCurrentContextCmd struct {
	kubeconfigFlag
}

func (c *configCurrentContextCmd) Run(g *globals) error {
	return report(g.stderr, c.run(g.stdout))
}

func (c *configCurrentContextCmd) run(out io.Writer) error {
	cfg, err := c.access().GetStartingConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	if cfg.CurrentContext == "" {
		return errors.New("current-context is not set")
	}
	_, err = fmt.Fprintln(out, cfg.CurrentContext)
	return err
}

type configUseContextCmd struct {
	kubeconfigFlag
	Name string `arg:"" name:"context" help:"The context to switch to."`
}

func (c *configUseContextCmd) Run(g *globals) error {
	return report(g.stderr, c.run(g.stdout))
}

func (c *configUseContextCmd) run(out io.Writer) error {
	err := c.modify(func(cfg *clientcmdapi.Config) error {
		if _, ok := cfg.Contexts[c.Name]; !ok {
			return fmt.Errorf("no context exists with the name: %q", c.Name)
		}
		cfg.CurrentContext = c.Name
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Switched to context %q.\n", c.Name)
	return err
}

type configSetClusterCmd struct {
	kubeconfigFlag
	Name                  string  `arg:"" name:"name" help:"The cluster entry to set."`
	Server                *string `name:"server" help:"The server's URL."`
	CertificateAuthority  *string `name:"certificate-authority" help:"Path to the certificate authority file."`
	InsecureSkipTLSVerify *bool   `name:"insecure-skip-tls-verify" help:"Do not check the server's certificate."`
}

func (c *configSetClusterCmd) Run(g *globals) error {
	return report(g.stderr, c.run(g.stdout))
}

func (c *configSetClusterCmd) run(out io.Writer) error {
	err := c.modify(func(cfg *clientcmdapi.Config) error {
		cluster, ok := cfg.Clusters[c.Name]
		if !ok {
			cluster = clientcmdapi.NewCluster()
		}
		if c.Server != nil {
			cluster.Server = *c.Server
		}
		if c.InsecureSkipTLSVerify != nil {
			cluster.InsecureSkipTLSVerify = *c.InsecureSkipTLSVerify
			if *c.InsecureSkipTLSVerify {
				cluster.CertificateAuthority = ""
				cluster.CertificateAuthorityData = nil
			}
		}
		if c.CertificateAuthority != nil {
			path, err := absPath(*c.CertificateAuthority)
			if err != nil {
				return err
			}
			cluster.CertificateAuthority = path
			if path != "" {
				cluster.InsecureSkipTLSVerify = false
				cluster.CertificateAuthorityData = nil
			}
		}
		cfg.Clusters[c.Name] = cluster
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Cluster %q set.\n", c.Name)
	return err
}

// absPath is path made absolute, as kubectl stores file paths; "" stays "".
func absPath(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	return abs, nil
}

type configSetContextCmd struct {
	kubeconfigFlag
	Name      string  `arg:"" name:"name" help:"The context entry to set."`
	Cluster   *string `name:"cluster" help:"The cluster of the context."`
	User      *string `name:"user" help:"The user of the context."`
	Namespace *string `name:"namespace" help:"The namespace of the context."`
}

func (c *configSetContextCmd) Run(g *globals) error {
	return report(g.stderr, c.run(g.stdout))
}

func (c *configSetContextCmd) run(out io.Writer) error {
	verb := "modified"
	err := c.modify(func(cfg *clientcmdapi.Config) error {
		ctx, ok := cfg.Contexts[c.Name]
		if !ok {
			ctx = clientcmdapi.NewContext()
			verb = "created"
		}
		if c.Cluster != nil {
			ctx.Cluster = *c.Cluster
		}
		if c.User != nil {
			ctx.AuthInfo = *c.User
		}
		if c.Namespace != nil {
			ctx.Namespace = *c.Namespace
		}
		cfg.Contexts[c.Name] = ctx
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Context %q %s.\n", c.Name, verb)
	return err
}

type configSetCredentialsCmd struct {
	kubeconfigFlag
	Name              string  `arg:"" name:"name" help:"The user entry to set."`
	Token             *string `name:"token" help:"Bearer token."`
	Username          *string `name:"username" help:"Username for basic authentication."`
	Password          *string `name:"password" help:"Password for basic authentication."`
	ClientCertificate *string `name:"client-certificate" help:"Path to the client certificate file."`
	ClientKey         *string `name:"client-key" help:"Path to the client key file."`
}

func (c *configSetCredentialsCmd) Run(g *globals) error {
	return report(g.stderr, c.run(g.stdout))
}

func (c *configSetCredentialsCmd) run(out io.Writer) error {
	set := func(p *string) bool { return p != nil && *p != "" }
	if set(c.Token) && (set(c.Username) || set(c.Password)) {
		return fmt.Errorf("you cannot specify more than one authentication method at the same time: --token, --username/--password")
	}
	err := c.modify(func(cfg *clientcmdapi.Config) error {
		user, ok := cfg.AuthInfos[c.Name]
		if !ok {
			user = clientcmdapi.NewAuthInfo()
		}
		if c.ClientCertificate != nil {
			path, err := absPath(*c.ClientCertificate)
			if err != nil {
				return err
			}
			user.ClientCertificate = path
			if path != "" {
				user.ClientCertificateData = nil
			}
		}
		if c.ClientKey != nil {
			path, err := absPath(*c.ClientKey)
			if err != nil {
				return err
			}
			user.ClientKey = path
			if path != "" {
				user.ClientKeyData = nil
			}
		}
		if c.Token != nil {
			user.Token = *c.Token
		}
		if c.Username != nil {
			user.Username = *c.Username
		}
		if c.Password != nil {
			user.Password = *c.Password
		}
		// Setting one kind of credential clears the other, as in kubectl.
		setToken, setBasic := set(c.Token), set(c.Username) || set(c.Password)
		if setToken || setBasic {
			if !setToken {
				user.Token = ""
			}
			if !setBasic {
				user.Username, user.Password = "", ""
			}
		}
		cfg.AuthInfos[c.Name] = user
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "User %q set.\n", c.Name)
	return err
}

// namespaceCmd is the book's `kubectl namespace [NAME]`: it shows the namespace
// requests go to, or sets it on the current context.
type namespaceCmd struct {
	clientFlags
	Name string `arg:"" optional:"" name:"namespace" help:"The namespace to use from now on."`
}

func (c *namespaceCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout))
}

func (c *namespaceCmd) run(_ context.Context, out io.Writer) error {
	if c.Name == "" {
		ns, err := c.namespace()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "Using namespace %s\n", ns)
		return err
	}
	k := kubeconfigFlag{Kubeconfig: c.Kubeconfig}
	err := k.modify(func(cfg *clientcmdapi.Config) error {
		name := c.Context
		if name == "" {
			name = cfg.CurrentContext
		}
		if name == "" {
			return errors.New("current-context is not set; create one with 'config set-context' and 'config use-context'")
		}
		ctx, ok := cfg.Contexts[name]
		if !ok {
			return fmt.Errorf("no context exists with the name: %q", name)
		}
		ctx.Namespace = c.Name
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Set current namespace to %s\n", c.Name)
	return err
}
