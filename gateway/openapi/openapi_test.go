package openapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// docs returns the v2 definitions and v3 component schemas under a common label.
func docs(t *testing.T) map[string]map[string]spec.Schema {
	t.Helper()
	v2, err := V2()
	if err != nil {
		t.Fatalf("V2: %v", err)
	}
	v3, err := V3()
	if err != nil {
		t.Fatalf("V3: %v", err)
	}
	v3Schemas := map[string]spec.Schema{}
	for name, s := range v3.Components.Schemas {
		v3Schemas[name] = *s
	}
	return map[string]map[string]spec.Schema{"v2": v2.Definitions, "v3": v3Schemas}
}

func TestKindsCarryGroupVersionKind(t *testing.T) {
	tests := []struct {
		definition string
		group      string
		version    string
		kind       string
	}{
		{"io.k8s.api.core.v1.Pod", "", "v1", "Pod"},
		{"io.k8s.api.core.v1.PodList", "", "v1", "PodList"},
		{"io.k8s.api.core.v1.ReplicationController", "", "v1", "ReplicationController"},
		{"io.k8s.api.core.v1.Service", "", "v1", "Service"},
		{"io.k8s.api.core.v1.Endpoints", "", "v1", "Endpoints"},
		{"io.k8s.api.core.v1.Node", "", "v1", "Node"},
		{"io.k8s.api.core.v1.Namespace", "", "v1", "Namespace"},
		{"io.k8s.api.core.v1.Event", "", "v1", "Event"},
		{"io.k8s.api.core.v1.Secret", "", "v1", "Secret"},
		{"io.k8s.api.core.v1.ServiceAccount", "", "v1", "ServiceAccount"},
		{"io.k8s.api.core.v1.ResourceQuota", "", "v1", "ResourceQuota"},
		{"io.k8s.api.core.v1.LimitRange", "", "v1", "LimitRange"},
		{"io.k8s.api.core.v1.PodTemplate", "", "v1", "PodTemplate"},
		{"io.k8s.api.core.v1.ComponentStatus", "", "v1", "ComponentStatus"},
		{"io.k8s.api.core.v1.Binding", "", "v1", "Binding"},
		{"io.k8s.api.core.v1.PersistentVolume", "", "v1", "PersistentVolume"},
		{"io.k8s.api.core.v1.PersistentVolumeClaimList", "", "v1", "PersistentVolumeClaimList"},
		{"io.k8s.api.autoscaling.v1.Scale", "autoscaling", "v1", "Scale"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.Status", "", "v1", "Status"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "", "v1", "DeleteOptions"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", "", "v1", "WatchEvent"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList", "", "v1", "APIResourceList"},
	}
	for _, r := range kinds.All() { // every kind of the table has its definitions
		tests = append(tests, struct{ definition, group, version, kind string }{"io.k8s.api.core.v1." + r.Kind, "", "v1", r.Kind})
		if r.NewList != nil {
			tests = append(tests, struct{ definition, group, version, kind string }{"io.k8s.api.core.v1." + r.Kind + "List", "", "v1", r.Kind + "List"})
		}
	}
	for doc, defs := range docs(t) {
		for _, tt := range tests {
			t.Run(doc+"/"+tt.definition, func(t *testing.T) {
				s, ok := defs[tt.definition]
				if !ok {
					t.Fatalf("definition %s missing", tt.definition)
				}
				list, ok := s.Extensions[ExtensionGVK].([]any)
				if !ok {
					t.Fatalf("no %s extension: %v", ExtensionGVK, s.Extensions)
				}
				for _, e := range list {
					m, _ := e.(map[string]any)
					if m["group"] == tt.group && m["version"] == tt.version && m["kind"] == tt.kind {
						return
					}
				}
				t.Fatalf("%s = %v, want %s/%s %s", ExtensionGVK, list, tt.group, tt.version, tt.kind)
			})
		}
	}
}

func TestGeneratedExtensionsKept(t *testing.T) {
	tests := []struct {
		definition string
		property   string
		extension  string
		want       any
	}{
		{"io.k8s.api.core.v1.PodSpec", "containers", "x-kubernetes-patch-strategy", "merge"},
		{"io.k8s.api.core.v1.PodSpec", "containers", "x-kubernetes-patch-merge-key", "name"},
		{"io.k8s.api.core.v1.PodSpec", "containers", "x-kubernetes-list-type", "map"},
		{"io.k8s.api.core.v1.ServiceSpec", "ports", "x-kubernetes-list-map-keys", []any{"port", "protocol"}},
	}
	for doc, defs := range docs(t) {
		for _, tt := range tests {
			t.Run(doc+"/"+tt.definition+"."+tt.property+"/"+tt.extension, func(t *testing.T) {
				got := defs[tt.definition].Properties[tt.property].Extensions[tt.extension]
				gotJSON, _ := json.Marshal(got)
				wantJSON, _ := json.Marshal(tt.want)
				if string(gotJSON) != string(wantJSON) {
					t.Fatalf("%s = %s, want %s", tt.extension, gotJSON, wantJSON)
				}
			})
		}
	}
}

// collectRefs returns every "$ref" value in a decoded JSON document.
func collectRefs(v any, refs map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && k == "$ref" {
				refs[s] = true
				continue
			}
			collectRefs(val, refs)
		}
	case []any:
		for _, val := range x {
			collectRefs(val, refs)
		}
	}
}

func TestNoDanglingRefs(t *testing.T) {
	v2, err := V2()
	if err != nil {
		t.Fatalf("V2: %v", err)
	}
	v3, err := V3()
	if err != nil {
		t.Fatalf("V3: %v", err)
	}
	tests := []struct {
		name    string
		doc     json.Marshaler
		prefix  string
		section func(map[string]any) map[string]any
	}{
		{"v2", v2, "#/definitions/", func(d map[string]any) map[string]any {
			m, _ := d["definitions"].(map[string]any)
			return m
		}},
		{"v3", v3, "#/components/schemas/", func(d map[string]any) map[string]any {
			c, _ := d["components"].(map[string]any)
			m, _ := c["schemas"].(map[string]any)
			return m
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := tt.doc.MarshalJSON()
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			var decoded map[string]any
			if err := json.Unmarshal(raw, &decoded); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			defs := tt.section(decoded)
			if len(defs) < 100 {
				t.Fatalf("only %d definitions", len(defs))
			}
			refs := map[string]bool{}
			collectRefs(decoded, refs)
			if len(refs) == 0 {
				t.Fatal("no $ref found; the walk is broken")
			}
			for ref := range refs {
				name, ok := strings.CutPrefix(ref, tt.prefix)
				if !ok {
					t.Errorf("ref %q does not start with %q", ref, tt.prefix)
					continue
				}
				if _, ok := defs[name]; !ok {
					t.Errorf("dangling ref %q", ref)
				}
			}
		})
	}
}

// TestBuildCost logs how long a cold build takes and how large the documents are.
func TestBuildCost(t *testing.T) {
	start := time.Now()
	v2, err := buildV2()
	if err != nil {
		t.Fatalf("buildV2: %v", err)
	}
	v2Time := time.Since(start)
	start = time.Now()
	v3, err := buildV3()
	if err != nil {
		t.Fatalf("buildV3: %v", err)
	}
	v3Time := time.Since(start)

	start = time.Now()
	v2JSON, err := v2.MarshalJSON()
	if err != nil {
		t.Fatalf("marshal v2: %v", err)
	}
	v2Proto, err := handler.ToProtoBinary(v2JSON)
	if err != nil {
		t.Fatalf("proto v2: %v", err)
	}
	v3JSON, err := v3.MarshalJSON()
	if err != nil {
		t.Fatalf("marshal v3: %v", err)
	}
	v3Proto, err := handler3.ToV3ProtoBinary(v3JSON)
	if err != nil {
		t.Fatalf("proto v3: %v", err)
	}
	encodeTime := time.Since(start)
	t.Logf("v2: %d definitions, built in %v, JSON %d bytes, protobuf %d bytes",
		len(v2.Definitions), v2Time, len(v2JSON), len(v2Proto))
	t.Logf("v3: %d schemas, built in %v, JSON %d bytes, protobuf %d bytes",
		len(v3.Components.Schemas), v3Time, len(v3JSON), len(v3Proto))
	t.Logf("encoding both to JSON and protobuf: %v", encodeTime)
}

func BenchmarkBuild(b *testing.B) {
	for b.Loop() {
		if _, err := buildV2(); err != nil {
			b.Fatal(err)
		}
		if _, err := buildV3(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestV3PathsCarryKinds(t *testing.T) {
	v3, err := V3()
	if err != nil {
		t.Fatalf("V3: %v", err)
	}
	tests := []struct {
		path   string
		method string
		kind   string
	}{
		{"/api/v1/namespaces/{namespace}/pods", "get", "Pod"},
		{"/api/v1/namespaces/{namespace}/pods/{name}", "get", "Pod"},
		{"/api/v1/namespaces/{namespace}/services", "get", "Service"},
		{"/api/v1/namespaces/{namespace}/replicationcontrollers/{name}", "get", "ReplicationController"},
		{"/api/v1/nodes", "get", "Node"},
		{"/api/v1/namespaces", "get", "Namespace"},
		{"/api/v1/namespaces/{namespace}/bindings", "post", "Binding"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			p, ok := v3.Paths.Paths[tt.path]
			if !ok {
				t.Fatalf("path missing")
			}
			op := map[string]*spec3.Operation{"get": p.Get, "post": p.Post}[tt.method]
			if op == nil {
				t.Fatalf("no %s operation", tt.method)
			}
			gvk, _ := op.Extensions[ExtensionGVK].(map[string]any)
			if gvk["kind"] != tt.kind || gvk["version"] != "v1" || gvk["group"] != "" {
				t.Fatalf("%s = %v, want v1 %s", ExtensionGVK, gvk, tt.kind)
			}
		})
	}
	// kubectl switches to server-side field validation when a PATCH operation advertises
	// the fieldValidation parameter; until the gateway implements that parameter, none may.
	for path, p := range v3.Paths.Paths {
		if p.Patch != nil {
			t.Errorf("%s has a PATCH operation", path)
		}
	}
}
