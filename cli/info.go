package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type versionCmd struct {
	clientFlags
	Client bool `name:"client" help:"Print the client version only (no server needed)."`
}

func (c *versionCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout))
}

// run prints the client line, then the server's version when a server is
// configured (a --server flag, or a kubeconfig with a current context).
func (c *versionCmd) run(ctx context.Context, out io.Writer) error {
	if _, err := fmt.Fprintf(out, "kubeactor %s (Kubernetes API v1, compatible with v1.0.0)\n", Version); err != nil {
		return err
	}
	if c.Client || !c.serverConfigured() {
		return nil
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	info, err := cn.discovery.ServerVersion()
	if err != nil {
		return fmt.Errorf("get server version: %w", err)
	}
	_, err = fmt.Fprintf(out, "Server Version: %s\n", info.GitVersion)
	return err
}

// serverConfigured says whether the flags or the kubeconfig name a server.
func (f *clientFlags) serverConfigured() bool {
	if f.Server != "" {
		return true
	}
	raw, err := f.clientConfig().RawConfig()
	if err != nil {
		return true // let connect report the broken kubeconfig
	}
	return len(raw.Clusters) > 0 && (raw.CurrentContext != "" || f.Context != "" || f.Cluster != "")
}

type apiVersionsCmd struct {
	clientFlags
}

func (c *apiVersionsCmd) Run(g *globals) error {
	return report(g.stderr, c.run(g.stdout))
}

// run prints every group/version the server serves, sorted, one per line.
func (c *apiVersionsCmd) run(out io.Writer) error {
	cn, err := c.connect()
	if err != nil {
		return err
	}
	groups, err := cn.discovery.ServerGroups()
	if err != nil {
		return fmt.Errorf("discover API groups: %w", err)
	}
	versions := metav1.ExtractGroupVersions(groups)
	sort.Strings(versions)
	for _, v := range versions {
		if _, err := fmt.Fprintln(out, v); err != nil {
			return err
		}
	}
	return nil
}

type clusterInfoCmd struct {
	clientFlags
}

func (c *clusterInfoCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout))
}

// run prints the book's cluster-info: the master's URL, then every kube-system
// service labelled kubernetes.io/cluster-service=true with its proxy URL.
func (c *clusterInfoCmd) run(ctx context.Context, out io.Writer) error {
	cn, err := c.connect()
	if err != nil {
		return err
	}
	host := strings.TrimSuffix(cn.config.Host, "/")
	svcs := metav1.APIResource{Name: "services", Namespaced: true}
	cn.namespace = metav1.NamespaceSystem
	raw, err := doRaw(ctx, cn.request("GET", svcs, false, "").Param("labelSelector", "kubernetes.io/cluster-service=true"))
	if err != nil {
		return fmt.Errorf("list cluster services: %w", err)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("decode services: %w", err)
	}
	fmt.Fprintf(out, "Kubernetes master is running at %s\n", host)
	for _, s := range list.Items {
		name := s.GetLabels()["kubernetes.io/name"]
		if name == "" {
			name = s.GetName()
		}
		fmt.Fprintf(out, "%s is running at %s/api/v1/namespaces/%s/services/%s/proxy\n", name, host, s.GetNamespace(), s.GetName())
	}
	return nil
}
