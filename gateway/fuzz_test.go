package gateway

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// FuzzDecodeBody feeds arbitrary bodies of each content type to the request decoder:
// it must answer an object of the path's kind or a 4xx Status error, never panic.
func FuzzDecodeBody(f *testing.F) {
	f.Add("application/json", []byte(podJSON("web")), "Strict")
	f.Add("application/json", []byte(`{"kind":"Pod","apiVersion":"v1","spec":{"foo":1}}`), "Warn")
	f.Add("application/yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n"), "")
	f.Add("application/vnd.kubernetes.protobuf", []byte("k8s\x00\n\x0b\n\x02v1\x12\x03Pod"), "")
	f.Add("text/plain", []byte("hello"), "Ignore")
	r, ok := kinds.Lookup("pods")
	if !ok {
		f.Fatal("no pods resource")
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, contentType string, body []byte, validation string) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/pods?fieldValidation="+url.QueryEscape(validation), nil)
		c := e.NewContext(req, httptest.NewRecorder())
		obj, err := decodeBody(c, contentType, body, kindOf(r), r.New())
		if err != nil {
			if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code < 400 || st.Status().Code >= 500 {
				t.Fatalf("error %v is not a 4xx Status", err)
			}
			return
		}
		if obj == nil || obj.GetObjectKind().GroupVersionKind().Kind != "Pod" {
			t.Fatalf("decoded %T %v", obj, obj)
		}
	})
}

// FuzzParseSelectors checks that any selector strings parse to a selection or a 400.
func FuzzParseSelectors(f *testing.F) {
	f.Add("app=web,tier!=db", "metadata.name=a")
	f.Add("env in (prod, qa),!canary,version", "spec.nodeName!=n1,status.phase=Running")
	f.Add("a==b", "spec.foo=x")
	f.Add("x notin (", "=")
	r, ok := kinds.Lookup("pods")
	if !ok {
		f.Fatal("no pods resource")
	}
	probe := newPod("a").label("app", "web").node("n1").obj()
	f.Fuzz(func(t *testing.T, labelSel, fieldSel string) {
		sel, err := parseSelection(r, labelSel, fieldSel, "")
		if err != nil {
			if !apierrors.IsBadRequest(err) {
				t.Fatalf("error %v is not a BadRequest", err)
			}
			return
		}
		_ = sel.matches(probe)
	})
}
