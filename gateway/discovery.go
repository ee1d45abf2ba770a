package gateway

import (
	"net"
	"net/http"
	"runtime"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// The version this server reports: the API of Kubernetes 1.0.
var serverVersion = version.Info{
	Major:        "1",
	Minor:        "0",
	GitVersion:   "v1.0.0",
	GitCommit:    "843c2c5d65278d57d138ff689b7de5151f058570",
	GitTreeState: "clean",
	BuildDate:    "2015-07-10T00:00:00Z",
	GoVersion:    runtime.Version(),
	Compiler:     runtime.Compiler,
	Platform:     runtime.GOOS + "/" + runtime.GOARCH,
}

// mountDiscovery registers /api, /api/v1, /apis, /version and the health checks,
// and the metrics.k8s.io group (metricsapi.go).
func (s *Server) mountDiscovery(e *echo.Echo) {
	resources := apiResources(kinds.All())
	e.GET("/api", func(c echo.Context) error {
		host := c.Request().Host
		if _, _, err := net.SplitHostPort(host); err != nil && host != "" {
			host = net.JoinHostPort(host, "80")
		}
		return writeJSON(c, http.StatusOK, &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
			Versions: []string{kinds.GroupVersion.Version},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
				{ClientCIDR: "0.0.0.0/0", ServerAddress: host},
			},
		})
	})
	e.GET("/api/v1", func(c echo.Context) error {
		return writeJSON(c, http.StatusOK, &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: kinds.GroupVersion.String(),
			APIResources: resources,
		})
	})
	e.GET("/apis", func(c echo.Context) error {
		return writeJSON(c, http.StatusOK, &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups:   []metav1.APIGroup{metricsAPIGroup()}, // metricsapi.go
		})
	})
	s.mountMetricsAPI(e)
	e.GET("/version", func(c echo.Context) error { return writeJSON(c, http.StatusOK, serverVersion) })
	for _, p := range []string{"/healthz", "/livez"} { // /readyz: forward.go
		e.GET(p, func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	}
}

// subresourceKinds says what discovery reports for each subresource: its kind, verbs
// and, when it is not core/v1, its group and version.
var subresourceKinds = map[string]struct {
	kind, group, version string
	verbs                []string
}{
	"status":      {verbs: []string{"get", "patch", "update"}},
	"binding":     {kind: "Binding", verbs: []string{"create"}},
	"scale":       {kind: "Scale", group: "autoscaling", version: "v1", verbs: []string{"get", "patch", "update"}},
	"finalize":    {verbs: []string{"update"}},
	"log":         {kind: "Pod", verbs: []string{"get"}},
	"exec":        {kind: "PodExecOptions", verbs: []string{"create", "get"}},
	"attach":      {kind: "PodAttachOptions", verbs: []string{"create", "get"}},
	"portforward": {kind: "PodPortForwardOptions", verbs: []string{"create", "get"}},
	"proxy":       {kind: "PodProxyOptions", verbs: []string{"create", "delete", "get", "patch", "update"}},
}

// categories are the resource groupings kubectl expands (`kubectl get all`), as the
// real server reports them for core/v1.
var categories = map[string][]string{"pods": {"all"}, "replicationcontrollers": {"all"}, "services": {"all"}}

// apiResources is the /api/v1 resource list, built from the resource table.
func apiResources(all []*kinds.Resource) []metav1.APIResource {
	out := []metav1.APIResource{}
	for _, r := range all {
		out = append(out, metav1.APIResource{
			Name: r.Name, SingularName: r.SingularName, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: metav1.Verbs(r.Verbs), ShortNames: r.ShortNames, Categories: categories[r.Name],
		})
		for _, sub := range r.Subresources {
			d, ok := subresourceKinds[sub]
			if !ok {
				continue
			}
			kind := d.kind
			if kind == "" {
				kind = r.Kind
			}
			if sub == "proxy" && r.Kind != "Pod" {
				kind = r.Kind + "ProxyOptions"
			}
			out = append(out, metav1.APIResource{
				Name: r.Name + "/" + sub, Namespaced: r.Namespaced, Kind: kind,
				Group: d.group, Version: d.version, Verbs: metav1.Verbs(d.verbs),
			})
		}
	}
	return out
}
