package openapi

import (
	"slices"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// v3Paths returns read operations (list and get; create for bindings) for the served
// resources, each with the x-kubernetes-group-version-kind extension: kubectl explain
// finds a resource's kind through them. There are deliberately no PATCH operations: kubectl
// looks for the fieldValidation parameter on PATCH operations, and without one it
// validates manifests on the client against the schemas.
func v3Paths() map[string]*spec3.Path {
	paths := map[string]*spec3.Path{}
	for _, r := range kinds.All() {
		collection := "/api/v1/" + r.Name
		scope := ""
		params := []*spec3.Parameter{}
		if r.Namespaced {
			collection = "/api/v1/namespaces/{namespace}/" + r.Name
			scope = "Namespaced"
			params = append(params, pathParameter("namespace", "object name and auth scope, such as for teams and projects"))
		}
		gvk := map[string]any{"group": "", "version": "v1", "kind": r.Kind}
		if slices.Equal(r.Verbs, []string{"create"}) { // bindings
			paths[collection] = &spec3.Path{PathProps: spec3.PathProps{
				Parameters: params,
				Post:       operation("createCoreV1"+scope+r.Kind, "create", "create a "+r.Kind, gvk, r.Kind),
			}}
			continue
		}
		paths[collection] = &spec3.Path{PathProps: spec3.PathProps{
			Parameters: params,
			Get:        operation("listCoreV1"+scope+r.Kind, "list", "list or watch objects of kind "+r.Kind, gvk, r.Kind+"List"),
		}}
		paths[collection+"/{name}"] = &spec3.Path{PathProps: spec3.PathProps{
			Parameters: append([]*spec3.Parameter{pathParameter("name", "name of the "+r.Kind)}, params...),
			Get:        operation("readCoreV1"+scope+r.Kind, "get", "read the specified "+r.Kind, gvk, r.Kind),
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
