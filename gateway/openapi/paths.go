package openapi

import (
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// servedResource is a resource of the v1 API, for the read paths of the v3 document.
type servedResource struct {
	resource   string // plural name in the URL
	kind       string
	namespaced bool
	createOnly bool // only POST to the collection (bindings)
}

// servedResources lists the resources the gateway serves under /api/v1.
var servedResources = []servedResource{
	{resource: "pods", kind: "Pod", namespaced: true},
	{resource: "replicationcontrollers", kind: "ReplicationController", namespaced: true},
	{resource: "services", kind: "Service", namespaced: true},
	{resource: "endpoints", kind: "Endpoints", namespaced: true},
	{resource: "events", kind: "Event", namespaced: true},
	{resource: "secrets", kind: "Secret", namespaced: true},
	{resource: "serviceaccounts", kind: "ServiceAccount", namespaced: true},
	{resource: "resourcequotas", kind: "ResourceQuota", namespaced: true},
	{resource: "limitranges", kind: "LimitRange", namespaced: true},
	{resource: "podtemplates", kind: "PodTemplate", namespaced: true},
	{resource: "persistentvolumeclaims", kind: "PersistentVolumeClaim", namespaced: true},
	{resource: "bindings", kind: "Binding", namespaced: true, createOnly: true},
	{resource: "nodes", kind: "Node"},
	{resource: "namespaces", kind: "Namespace"},
	{resource: "persistentvolumes", kind: "PersistentVolume"},
	{resource: "componentstatuses", kind: "ComponentStatus"},
}

// v3Paths returns read operations (list and get; create for bindings) for the served
// resources, each with the x-kubernetes-group-version-kind extension: kubectl explain
// finds a resource's kind through them. There are deliberately no PATCH operations: kubectl
// looks for the fieldValidation parameter on PATCH operations, and without one it
// validates manifests on the client against the schemas.
func v3Paths() map[string]*spec3.Path {
	paths := map[string]*spec3.Path{}
	for _, r := range servedResources {
		collection := "/api/v1/" + r.resource
		scope := ""
		params := []*spec3.Parameter{}
		if r.namespaced {
			collection = "/api/v1/namespaces/{namespace}/" + r.resource
			scope = "Namespaced"
			params = append(params, pathParameter("namespace", "object name and auth scope, such as for teams and projects"))
		}
		gvk := map[string]any{"group": "", "version": "v1", "kind": r.kind}
		if r.createOnly {
			paths[collection] = &spec3.Path{PathProps: spec3.PathProps{
				Parameters: params,
				Post:       operation("createCoreV1"+scope+r.kind, "create", "create a "+r.kind, gvk, r.kind),
			}}
			continue
		}
		paths[collection] = &spec3.Path{PathProps: spec3.PathProps{
			Parameters: params,
			Get:        operation("listCoreV1"+scope+r.kind, "list", "list or watch objects of kind "+r.kind, gvk, r.kind+"List"),
		}}
		paths[collection+"/{name}"] = &spec3.Path{PathProps: spec3.PathProps{
			Parameters: append([]*spec3.Parameter{pathParameter("name", "name of the "+r.kind)}, params...),
			Get:        operation("readCoreV1"+scope+r.kind, "get", "read the specified "+r.kind, gvk, r.kind),
		}}
	}
	return paths
}

func pathParameter(name, description string) *spec3.Parameter {
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: name, In: "path", Description: description, Required: true,
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, UniqueItems: true}},
	}}
}

// operation builds an operation whose 200 response is the core/v1 definition named kind.
func operation(id, action, description string, gvk map[string]any, kind string) *spec3.Operation {
	ref := spec.MustCreateRef("#/components/schemas/io.k8s.api.core.v1." + kind)
	body := &spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref}}
	content := map[string]*spec3.MediaType{}
	for _, mediaType := range []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"} {
		content[mediaType] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: body}}
	}
	return &spec3.Operation{
		OperationProps: spec3.OperationProps{
			Tags:        []string{"core_v1"},
			Description: description,
			OperationId: id,
			Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{
				StatusCodeResponses: map[int]*spec3.Response{
					200: {ResponseProps: spec3.ResponseProps{Description: "OK", Content: content}},
				},
			}},
		},
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			"x-kubernetes-action": action,
			ExtensionGVK:          gvk,
		}},
	}
}
