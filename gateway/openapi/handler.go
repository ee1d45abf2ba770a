package openapi

import (
	"net/http"
	"strings"

	"k8s.io/kube-openapi/pkg/cached"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	v2Path = "/openapi/v2"
	v3Path = "/openapi/v3"
	// documentsETag identifies the (static) documents to kube-openapi's caches, which
	// re-serialize only when it changes.
	documentsETag = "kubeactor-openapi-1"
)

// Handler returns an http.Handler serving GET /openapi/v2, /openapi/v3 (the v3 discovery
// document) and /openapi/v3/api/v1, in JSON or protobuf by the Accept header, with ETags.
// The documents are built on the first request that needs them. Paths it does not know
// get 404.
func Handler() (http.Handler, error) {
	mux := &prefixMux{ServeMux: http.NewServeMux()}

	v2 := handler.NewOpenAPIServiceLazy(cached.Func(func() (*spec.Swagger, string, error) {
		sw, err := V2()
		return sw, documentsETag, err
	}))
	v2.RegisterOpenAPIVersionedService(v2Path, mux)

	v3 := handler3.NewOpenAPIService()
	v3.UpdateGroupVersionLazy(GroupVersionPath, cached.Func(func() (*spec3.OpenAPI, string, error) {
		doc, err := V3()
		return doc, documentsETag, err
	}))
	if err := v3.RegisterOpenAPIV3VersionedService(v3Path, &knownGroups{prefixMux: mux, groups: map[string]bool{GroupVersionPath: true}}); err != nil {
		return nil, err
	}
	return mux, nil
}

// prefixMux adapts http.ServeMux to kube-openapi's PathHandlerByGroupVersion: a pattern
// ending in "/" already matches its whole subtree.
type prefixMux struct{ *http.ServeMux }

func (m *prefixMux) HandlePrefix(prefix string, h http.Handler) { m.Handle(prefix, h) }

// knownGroups answers 404 for group-versions the v3 service does not have (kube-openapi
// would answer an empty 200).
type knownGroups struct {
	*prefixMux
	groups map[string]bool
}

func (k *knownGroups) HandlePrefix(prefix string, h http.Handler) {
	k.prefixMux.HandlePrefix(prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !k.groups[strings.TrimPrefix(r.URL.Path, prefix)] {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
}
