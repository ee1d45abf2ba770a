package openapi

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// ExtensionGVK is the vendor extension that tells clients which group/version/kind a
// definition describes; kubectl looks schemas up by it.
const ExtensionGVK = "x-kubernetes-group-version-kind"

// GroupVersionPath is the OpenAPI v3 group-version document the gateway serves
// (/openapi/v3/api/v1).
const GroupVersionPath = "api/v1"

// info is the document's info block, in the style of a real API server.
var info = &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: "v1.0.0"}}

// rootTypes are the objects the API serves or accepts. Every definition reachable from
// them ends up in the documents.
var rootTypes = []any{
	// core/v1 kinds and their lists.
	&corev1.Pod{}, &corev1.PodList{},
	&corev1.ReplicationController{}, &corev1.ReplicationControllerList{},
	&corev1.Service{}, &corev1.ServiceList{},
	&corev1.Endpoints{}, &corev1.EndpointsList{},
	&corev1.Node{}, &corev1.NodeList{},
	&corev1.Namespace{}, &corev1.NamespaceList{},
	&corev1.Event{}, &corev1.EventList{},
	&corev1.Secret{}, &corev1.SecretList{},
	&corev1.ServiceAccount{}, &corev1.ServiceAccountList{},
	&corev1.ResourceQuota{}, &corev1.ResourceQuotaList{},
	&corev1.LimitRange{}, &corev1.LimitRangeList{},
	&corev1.PodTemplate{}, &corev1.PodTemplateList{},
	&corev1.ComponentStatus{}, &corev1.ComponentStatusList{},
	&corev1.PersistentVolume{}, &corev1.PersistentVolumeList{},
	&corev1.PersistentVolumeClaim{}, &corev1.PersistentVolumeClaimList{},
	&corev1.Binding{},
	// core/v1 subresource options.
	&corev1.PodLogOptions{}, &corev1.PodExecOptions{}, &corev1.PodAttachOptions{},
	&corev1.PodProxyOptions{}, &corev1.NodeProxyOptions{}, &corev1.ServiceProxyOptions{},
	// autoscaling/v1 Scale (the replicationcontrollers/scale subresource).
	&autoscalingv1.Scale{},
	// meta/v1 kinds every API server speaks.
	&metav1.Status{}, &metav1.DeleteOptions{}, &metav1.WatchEvent{},
	&metav1.APIResourceList{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{},
	&metav1.ListOptions{}, &metav1.GetOptions{}, &metav1.CreateOptions{},
	&metav1.UpdateOptions{}, &metav1.PatchOptions{}, &metav1.Patch{},
	// /version.
	&version.Info{},
}

// rootNames returns the model names of rootTypes, e.g. "io.k8s.api.core.v1.Pod".
func rootNames() []string {
	names := make([]string, 0, len(rootTypes))
	for _, t := range rootTypes {
		names = append(names, util.GetCanonicalTypeName(t))
	}
	return names
}

// gvkIndex maps model names to the group/version/kinds registered for the Go type,
// built from a scheme holding the served groups, like the real server's definition namer.
func gvkIndex() (map[string][]schema.GroupVersionKind, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, autoscalingv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("openapi: registering types: %w", err)
		}
	}
	index := map[string][]schema.GroupVersionKind{}
	for gvk, typ := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		name := util.GetCanonicalTypeName(reflect.New(typ).Interface())
		index[name] = append(index[name], gvk)
	}
	for _, gvks := range index {
		sort.Slice(gvks, func(i, j int) bool {
			a, b := gvks[i], gvks[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
	}
	return index, nil
}

// definitionNamer returns a common.Config GetDefinitionName: model names are already
// REST friendly ("io.k8s.api.core.v1.Pod"); Go canonical names ("k8s.io/api/core/v1.Pod")
// are converted. Kinds get the x-kubernetes-group-version-kind extension.
func definitionNamer(index map[string][]schema.GroupVersionKind) func(string) (string, spec.Extensions) {
	return func(name string) (string, spec.Extensions) {
		friendly := name
		if strings.Contains(name, "/") {
			friendly = util.ToRESTFriendlyName(name)
		}
		gvks, ok := index[name]
		if !ok {
			return friendly, nil
		}
		list := make([]any, 0, len(gvks))
		for _, gvk := range gvks {
			list = append(list, map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
		}
		return friendly, spec.Extensions{ExtensionGVK: list}
	}
}

// buildV2 builds the OpenAPI v2 document. It has definitions and no paths: kubectl's
// client-side validation and explain need only the schemas, and without paths that
// advertise fieldValidation kubectl validates on the client.
func buildV2() (*spec.Swagger, error) {
	index, err := gvkIndex()
	if err != nil {
		return nil, err
	}
	cfg := &common.Config{
		Info:              info,
		GetDefinitions:    GetOpenAPIDefinitions,
		GetDefinitionName: definitionNamer(index),
	}
	sw, err := builder.BuildOpenAPIDefinitionsForResources(cfg, rootNames()...)
	if err != nil {
		return nil, fmt.Errorf("openapi: building v2 definitions: %w", err)
	}
	return sw, nil
}

// buildV3 builds the OpenAPI v3 document for the api/v1 group-version: the schemas, and
// read paths for the served resources (see v3Paths).
func buildV3() (*spec3.OpenAPI, error) {
	index, err := gvkIndex()
	if err != nil {
		return nil, err
	}
	cfg := &common.OpenAPIV3Config{
		Info:              info,
		GetDefinitions:    GetOpenAPIDefinitions,
		GetDefinitionName: definitionNamer(index),
	}
	schemas, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, rootNames()...)
	if err != nil {
		return nil, fmt.Errorf("openapi: building v3 schemas: %w", err)
	}
	return &spec3.OpenAPI{
		Version:    "3.0.0",
		Info:       info,
		Paths:      &spec3.Paths{Paths: v3Paths()},
		Components: &spec3.Components{Schemas: schemas},
	}, nil
}

var (
	v2Once = sync.OnceValues(buildV2)
	v3Once = sync.OnceValues(buildV3)
)

// V2 returns the OpenAPI v2 document, built on first use and cached. Callers must not
// modify it.
func V2() (*spec.Swagger, error) { return v2Once() }

// V3 returns the OpenAPI v3 document for api/v1, built on first use and cached. Callers
// must not modify it.
func V3() (*spec3.OpenAPI, error) { return v3Once() }
