package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestSelectors(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	pods := []*corev1.Pod{
		newPod("a").label("app", "web").label("tier", "front").obj(),
		newPod("b").label("app", "web").label("tier", "back").node("n1").obj(),
		newPod("c").label("app", "db").obj(),
		newPod("d").ns("kube-system").label("app", "web").obj(),
	}
	for _, p := range pods {
		if _, err := h.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", p.Name, err)
		}
	}
	tests := []struct {
		name, namespace, labels, fields string
		want                            []string
	}{
		{"all", "", "", "", []string{"a", "b", "c", "d"}},
		{"namespace", "default", "", "", []string{"a", "b", "c"}},
		{"equality", "", "app=web", "", []string{"a", "b", "d"}},
		{"double equals", "default", "app==web", "", []string{"a", "b"}},
		{"inequality", "default", "app!=web", "", []string{"c"}},
		{"in", "", "tier in (front,back)", "", []string{"a", "b"}},
		{"notin", "default", "tier notin (front)", "", []string{"b", "c"}},
		{"exists", "", "tier", "", []string{"a", "b"}},
		{"not exists", "", "!tier", "", []string{"c", "d"}},
		{"field name", "", "", "metadata.name=c", []string{"c"}},
		{"field namespace", "", "", "metadata.namespace=kube-system", []string{"d"}},
		{"field node", "", "", "spec.nodeName=n1", []string{"b"}},
		{"field not node", "default", "", "spec.nodeName!=n1", []string{"a", "c"}},
		{"both", "", "app=web", "metadata.namespace=default", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := h.client.CoreV1().Pods(tt.namespace).List(ctx, metav1.ListOptions{LabelSelector: tt.labels, FieldSelector: tt.fields})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			var got []string
			for _, p := range list.Items {
				got = append(got, p.Name)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPagination(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	for i := 0; i < 23; i++ {
		ns := "default"
		if i%3 == 0 {
			ns = "kube-system"
		}
		if _, err := h.client.CoreV1().Pods(ns).Create(ctx, newPod(fmt.Sprintf("p%02d", i)).ns(ns).obj(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	for _, tt := range []struct {
		name, namespace, labels string
		limit                   int64
	}{
		{"all namespaces by 5", "", "", 5},
		{"one namespace by 4", "default", "", 4},
		{"by 1", "", "", 1},
		{"larger than the list", "", "", 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			full, err := h.client.CoreV1().Pods(tt.namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("full list: %v", err)
			}
			var paged []string
			opts := metav1.ListOptions{Limit: tt.limit}
			for pages := 0; ; pages++ {
				list, err := h.client.CoreV1().Pods(tt.namespace).List(ctx, opts)
				if err != nil {
					t.Fatalf("page %d: %v", pages, err)
				}
				if int64(len(list.Items)) > tt.limit {
					t.Fatalf("page of %d items, limit %d", len(list.Items), tt.limit)
				}
				for _, p := range list.Items {
					paged = append(paged, p.Namespace+"/"+p.Name)
				}
				if list.Continue == "" {
					if list.RemainingItemCount != nil {
						t.Errorf("remainingItemCount on the last page")
					}
					break
				}
				if list.RemainingItemCount == nil || *list.RemainingItemCount != int64(len(full.Items)-len(paged)) {
					t.Errorf("remainingItemCount %v after %d of %d", list.RemainingItemCount, len(paged), len(full.Items))
				}
				// A write between pages does not change the listing.
				if pages == 0 {
					if _, err := h.client.CoreV1().Pods("default").Create(ctx, newPod(fmt.Sprintf("late%d", len(paged))).obj(), metav1.CreateOptions{}); err != nil {
						t.Fatalf("create: %v", err)
					}
				}
				opts.Continue = list.Continue
			}
			var want []string
			for _, p := range full.Items {
				want = append(want, p.Namespace+"/"+p.Name)
			}
			if strings.Join(paged, ",") != strings.Join(want, ",") {
				t.Errorf("paged %v\nwant  %v", paged, want)
			}
		})
	}
}

func TestTable(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, n := range []string{"a", "b"} {
		if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json", podJSON(n)); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	tests := []struct {
		name, path string
		rows       int
		object     string // what a row's object holds
	}{
		{"list", "/api/v1/namespaces/default/pods", 2, "PartialObjectMetadata"},
		{"get", "/api/v1/namespaces/default/pods/a", 1, "PartialObjectMetadata"},
		{"include object", "/api/v1/namespaces/default/pods?includeObject=Object", 2, "Pod"},
		{"include none", "/api/v1/namespaces/default/pods?includeObject=None", 2, ""},
		{"paged", "/api/v1/namespaces/default/pods?limit=1", 1, "PartialObjectMetadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := h.do(http.MethodGet, tt.path, "", "", "Accept", accept)
			if code != http.StatusOK {
				t.Fatalf("code %d: %s", code, body)
			}
			var tab metav1.Table
			if err := json.Unmarshal([]byte(body), &tab); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if tab.Kind != "Table" || tab.APIVersion != "meta.k8s.io/v1" || len(tab.Rows) != tt.rows || len(tab.ColumnDefinitions) == 0 || tab.ResourceVersion == "" {
				t.Fatalf("table %s", body)
			}
			if len(tab.Rows[0].Cells) != len(tab.ColumnDefinitions) {
				t.Errorf("%d cells for %d columns", len(tab.Rows[0].Cells), len(tab.ColumnDefinitions))
			}
			var kind struct{ Kind string }
			if len(tab.Rows[0].Object.Raw) > 0 {
				_ = json.Unmarshal(tab.Rows[0].Object.Raw, &kind)
			}
			if kind.Kind != tt.object {
				t.Errorf("row object kind %q, want %q", kind.Kind, tt.object)
			}
			if strings.Contains(tt.path, "limit=1") && tab.Continue == "" {
				t.Errorf("paged table has no continue")
			}
		})
	}
}

func TestProtobuf(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := testCtx(t)
	cfg := rest.CopyConfig(h.config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	pods := client.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, newPod("proto").label("a", "b").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := pods.Get(ctx, "proto", metav1.GetOptions{})
	if err != nil || got.Labels["a"] != "b" {
		t.Fatalf("get: %v %v", got, err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	if err := pods.Delete(ctx, "proto", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
}
