package gateway

import (
	"bytes"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"
)

// tableKind is the type of every Table answer.
var tableKind = metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}

// includeObjectOf reads ?includeObject= (Metadata by default, as the real server).
func includeObjectOf(c echo.Context) (metav1.IncludeObjectPolicy, error) {
	switch v := metav1.IncludeObjectPolicy(c.QueryParam("includeObject")); v {
	case "":
		return metav1.IncludeMetadata, nil
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
		return v, nil
	default:
		return "", apierrors.NewBadRequest(fmt.Sprintf("includeObject must be one of None, Metadata, Object; got %q", v))
	}
}

// table renders items as a meta.k8s.io/v1 Table with the resource's columns;
// headers false leaves the column definitions out (watch events after the first).
func (s *Server) table(c echo.Context, r *kinds.Resource, items []*persistence.Item, lm metav1.ListMeta, headers bool) (*metav1.Table, error) {
	include, err := includeObjectOf(c)
	if err != nil {
		return nil, err
	}
	t := &metav1.Table{TypeMeta: tableKind, ListMeta: lm, Rows: make([]metav1.TableRow, 0, len(items))}
	if headers {
		t.ColumnDefinitions = r.Columns
	}
	now := s.now()
	for _, it := range items {
		row, err := tableRow(r, it, include, now)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// tableRow is one object's row: its cells and, per includeObject, its metadata or
// the whole object.
func tableRow(r *kinds.Resource, it *persistence.Item, include metav1.IncludeObjectPolicy, now time.Time) (metav1.TableRow, error) {
	row := metav1.TableRow{}
	obj := it.Peek() // a list's rows do not keep lean objects decoded
	switch {
	case r.RowAt != nil:
		row.Cells = r.RowAt(obj, now)
	case r.Row != nil:
		row.Cells = r.Row(obj)
	default:
		m, err := metaOf(obj)
		if err != nil {
			return row, err
		}
		row.Cells = []interface{}{m.GetName()}
	}
	switch include {
	case metav1.IncludeObject:
		row.Object = runtime.RawExtension{Raw: bytes.TrimRight(it.JSON(), "\n")}
	case metav1.IncludeMetadata:
		m, err := metaOf(obj)
		if err != nil {
			return row, err
		}
		pom := &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
			ObjectMeta: objectMeta(m),
		}
		row.Object = runtime.RawExtension{Object: pom}
	}
	return row, nil
}

// objectMeta is the ObjectMeta behind an accessor (typed objects embed one).
func objectMeta(m metav1.Object) metav1.ObjectMeta {
	if om, ok := m.(*metav1.ObjectMeta); ok {
		return *om
	}
	return metav1.ObjectMeta{
		Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
		CreationTimestamp: m.GetCreationTimestamp(), DeletionTimestamp: m.GetDeletionTimestamp(),
		Labels: m.GetLabels(), Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(),
	}
}
