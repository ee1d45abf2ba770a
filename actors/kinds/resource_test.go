package kinds

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestAllIsSortedAndComplete(t *testing.T) {
	want := []string{
		"bindings", "componentstatuses", "endpoints", "events", "limitranges", "namespaces", "nodes",
		"persistentvolumeclaims", "persistentvolumes", "pods", "podtemplates", "replicationcontrollers",
		"resourcequotas", "secrets", "serviceaccounts", "services",
	}
	var got []string
	for _, r := range All() {
		got = append(got, r.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	// All returns a copy: callers cannot reorder the table.
	All()[0] = nil
	if All()[0] == nil {
		t.Fatal("All() exposes the table's backing array")
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name     string
		wantKind string
		found    bool
	}{
		{"pods", "Pod", true},
		{"replicationcontrollers", "ReplicationController", true},
		{"limits", "LimitRange", true},
		{"limitranges", "LimitRange", true},
		{"componentstatuses", "ComponentStatus", true},
		{"po", "", false},  // short names are a client convenience, not URLs
		{"pod", "", false}, // singular names neither
		{"deployments", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Lookup(tt.name)
			if ok != tt.found {
				t.Fatalf("Lookup(%q) found=%v, want %v", tt.name, ok, tt.found)
			}
			if ok && r.Kind != tt.wantKind {
				t.Fatalf("Lookup(%q).Kind = %q, want %q", tt.name, r.Kind, tt.wantKind)
			}
		})
	}
	if r, ok := LookupKind("Service"); !ok || r.Name != "services" {
		t.Fatalf("LookupKind(Service) = %v, %v", r, ok)
	}
}

func TestDiscoveryAttributes(t *testing.T) {
	tests := []struct {
		name         string
		short        []string
		namespaced   bool
		verbs        []string
		subresources []string
	}{
		{"pods", []string{"po"}, true, verbsAll, []string{"attach", "binding", "exec", "log", "portforward", "proxy", "status"}},
		{"replicationcontrollers", []string{"rc"}, true, verbsAll, []string{"scale", "status"}},
		{"services", []string{"svc"}, true, verbsAll, []string{"proxy", "status"}},
		{"endpoints", []string{"ep"}, true, verbsAll, nil},
		{"nodes", []string{"no"}, false, verbsAll, []string{"proxy", "status"}},
		{"namespaces", []string{"ns"}, false, []string{"create", "delete", "get", "list", "patch", "update", "watch"}, []string{"finalize", "status"}},
		{"events", []string{"ev"}, true, verbsAll, nil},
		{"secrets", nil, true, verbsAll, nil},
		{"serviceaccounts", []string{"sa"}, true, verbsAll, nil},
		{"resourcequotas", []string{"quota"}, true, verbsAll, []string{"status"}},
		{"limitranges", []string{"limits"}, true, verbsAll, nil},
		{"podtemplates", nil, true, verbsAll, nil},
		{"componentstatuses", []string{"cs"}, false, []string{"get", "list"}, nil},
		{"bindings", nil, true, []string{"create"}, nil},
		{"persistentvolumes", []string{"pv"}, false, verbsAll, []string{"status"}},
		{"persistentvolumeclaims", []string{"pvc"}, true, verbsAll, []string{"status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustResource(t, tt.name)
			if !slices.Equal(r.ShortNames, tt.short) || r.Namespaced != tt.namespaced ||
				!slices.Equal(r.Verbs, tt.verbs) || !slices.Equal(r.Subresources, tt.subresources) {
				t.Fatalf("%s: short=%v namespaced=%v verbs=%v sub=%v", tt.name, r.ShortNames, r.Namespaced, r.Verbs, r.Subresources)
			}
			if r.SingularName == "" || r.Kind == "" || r.New == nil {
				t.Fatalf("%s: missing singular name, kind or New", tt.name)
			}
			if r.Row != nil {
				t.Fatalf("%s: Row must stay nil, RowAt is the pure variant", tt.name)
			}
		})
	}
}

// Every resource's New object goes through the table's functions without
// panicking, and rows have one cell per column.
func TestTableInvariants(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range All() {
		t.Run(r.Name, func(t *testing.T) {
			obj := r.New()
			gvks, _, err := Scheme.ObjectKinds(obj)
			if err != nil || gvks[0].Kind != r.Kind {
				t.Fatalf("New() kind = %v (%v), want %s", gvks, err, r.Kind)
			}
			if r.NewList != nil {
				if _, _, err := Scheme.ObjectKinds(r.NewList()); err != nil {
					t.Fatalf("NewList(): %v", err)
				}
			}
			defaulted(r, obj)
			if r.Validate != nil && len(r.Validate(obj)) == 0 {
				t.Fatalf("an empty %s validated", r.Kind)
			}
			if r.PrepareForUpdate != nil {
				r.PrepareForUpdate(r.New(), obj)
			}
			if r.PrepareForStatusUpdate != nil {
				r.PrepareForStatusUpdate(r.New(), obj)
			}
			if r.RowAt != nil {
				if got := len(r.RowAt(obj, now)); got != len(r.Columns) {
					t.Fatalf("RowAt gives %d cells for %d columns", got, len(r.Columns))
				}
				if r.Columns[0].Name != "Name" && r.Name != "events" {
					t.Fatalf("first column is %q", r.Columns[0].Name)
				}
			}
			if r.Fields != nil {
				set := r.Fields(obj)
				if _, ok := set["metadata.name"]; !ok {
					t.Fatalf("Fields lacks metadata.name: %v", set)
				}
				if _, ok := set["metadata.namespace"]; !ok {
					t.Fatalf("Fields lacks metadata.namespace: %v", set)
				}
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	tests := []struct {
		resource string
		selector string
		wantErr  string
	}{
		{"pods", "spec.nodeName=node-1,status.phase!=Running", ""},
		{"pods", "status.podIP=10.0.0.1,spec.schedulerName=default-scheduler,spec.restartPolicy=Always", ""},
		{"pods", "spec.serviceAccountName=default,status.nominatedNodeName=n,metadata.namespace=default", ""},
		{"pods", "spec.unschedulable=true", "field label not supported: spec.unschedulable"},
		{"nodes", "spec.unschedulable=false,metadata.name=a", ""},
		{"events", "involvedObject.kind=Pod,involvedObject.name=x,involvedObject.namespace=d,involvedObject.uid=u", ""},
		{"events", "involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,involvedObject.fieldPath=f", ""},
		{"events", "reason=Scheduled,reportingComponent=s,source=kubelet,type=Normal", ""},
		{"events", "message=x", "field label not supported: message"},
		{"secrets", "type=Opaque", ""},
		{"namespaces", "status.phase=Active", ""},
		{"replicationcontrollers", "status.replicas=3", ""},
		{"services", "foo=bar", "field label not supported: foo"},
		{"services", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.resource+"/"+tt.selector, func(t *testing.T) {
			sel, err := fields.ParseSelector(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			err = mustResource(t, tt.resource).ValidateFieldSelector(sel)
			if got := errString(err); got != tt.wantErr {
				t.Fatalf("ValidateFieldSelector(%q) = %q, want %q", tt.selector, got, tt.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestFieldValuesMatch(t *testing.T) {
	pod := newPod("web").with(func(p *corev1.Pod) {
		p.Spec.NodeName = "node-1"
		p.Status.Phase = "Running"
		p.Status.PodIPs = []corev1.PodIP{{IP: "10.1.0.5"}}
	}).obj()
	set := pods.Fields(pod)
	for sel, want := range map[string]bool{
		"spec.nodeName=node-1":                         true,
		"spec.nodeName=node-2":                         false,
		"status.podIP=10.1.0.5,status.phase=Running":   true,
		"metadata.name=web,metadata.namespace=default": true,
		"spec.restartPolicy=Always":                    true,
	} {
		if got := fields.ParseSelectorOrDie(sel).Matches(set); got != want {
			t.Errorf("%s matches = %v, want %v", sel, got, want)
		}
	}
}

func TestHumanAge(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{5 * time.Second, "5s"},
		{190 * time.Second, "3m10s"},
		{2 * time.Hour, "120m"}, // kubectl shows minutes below 3h
		{4 * time.Hour, "4h"},
		{49 * time.Hour, "2d1h"},
		{9 * 24 * time.Hour, "9d"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := HumanAge(metav1.NewTime(now.Add(-tt.ago)), now); got != tt.want {
				t.Fatalf("HumanAge(-%v) = %q, want %q", tt.ago, got, tt.want)
			}
		})
	}
	if got := HumanAge(metav1.Time{}, now); got != "<unknown>" {
		t.Fatalf("zero time = %q", got)
	}
}
