package cli

import (
	"reflect"
	"testing"
)

var testTypes = resourceTypes{
	{Name: "pods", SingularName: "pod", ShortNames: []string{"po"}, Kind: "Pod", Namespaced: true},
	{Name: "pods/status", Kind: "Pod", Namespaced: true},
	{Name: "replicationcontrollers", SingularName: "replicationcontroller", ShortNames: []string{"rc"}, Kind: "ReplicationController", Namespaced: true},
	{Name: "nodes", SingularName: "node", ShortNames: []string{"no"}, Kind: "Node"},
}

func TestLookup(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pods", "pods"}, {"pod", "pods"}, {"po", "pods"}, {"Pod", "pods"}, {"PODS", "pods"},
		{"rc", "replicationcontrollers"}, {"replicationcontroller", "replicationcontrollers"},
		{"no", "nodes"}, {"minions", ""}, {"status", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := testTypes.lookup(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("lookup(%q) = %s, want an error", tt.in, got.Name)
				}
				return
			}
			if err != nil || got.Name != tt.want {
				t.Fatalf("lookup(%q) = %q, %v; want %q", tt.in, got.Name, err, tt.want)
			}
		})
	}
}

func TestByKind(t *testing.T) {
	if r, err := testTypes.byKind("Pod"); err != nil || r.Name != "pods" {
		t.Fatalf("byKind(Pod) = %q, %v", r.Name, err)
	}
	if _, err := testTypes.byKind("Deployment"); err == nil {
		t.Fatal("byKind(Deployment) found something")
	}
}

func TestParseTypeArgs(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []typeRequest
		wantErr bool
	}{
		{"one type", []string{"pods"}, []typeRequest{{Type: "pods", Names: []string{}}}, false},
		{"types and names", []string{"rc,pods", "a", "b"}, []typeRequest{{Type: "rc", Names: []string{"a", "b"}}, {Type: "pods", Names: []string{"a", "b"}}}, false},
		{"type/name", []string{"pod/a", "pod/b", "rc/c"}, []typeRequest{{Type: "pod", Names: []string{"a", "b"}}, {Type: "rc", Names: []string{"c"}}}, false},
		{"nothing", nil, nil, true},
		{"empty type", []string{"pods,"}, nil, true},
		{"mixed forms", []string{"pod/a", "b"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTypeArgs(tt.in)
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseTypeArgs(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestDecodeObjects(t *testing.T) {
	in := `apiVersion: v1
kind: ReplicationController
metadata: {name: a}
---
---
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"}}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: c}}
`
	objs, err := decodeObjects([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	want := []string{"ReplicationController/a", "Service/b", "Pod/c"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeObjects = %v, want %v", got, want)
	}
	if _, err := decodeObjects([]byte("metadata: {name: x}\n")); err == nil {
		t.Fatal("an object without kind was accepted")
	}
}

func TestDeletedMessage(t *testing.T) {
	if got := deletedMessage("ReplicationController", "x"); got != `replicationcontroller "x" deleted` {
		t.Fatalf("deletedMessage = %q", got)
	}
}
