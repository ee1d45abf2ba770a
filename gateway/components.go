package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/persistence"
)

// componentStatuses reports the server's own parts, as the real API server reports
// its scheduler, controller manager and etcd members. They are probed on request and
// never stored.
func (s *Server) componentStatuses(ctx context.Context) []*persistence.Item {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rev := s.store.Revision()
	probes := []struct {
		name  string
		probe func() (string, error)
	}{
		{"store-0", func() (string, error) {
			// A read of a namespace every cluster has proves the cache answers.
			_, err := s.store.Get(persistence.Key{Resource: "namespaces", Name: "default"})
			return fmt.Sprintf(`{"health":"true","revision":"%d"}`, rev), err
		}},
		{"controller-manager", func() (string, error) { return "ok", s.actors.Healthy(ctx) }},
	}
	items := make([]*persistence.Item, 0, len(probes))
	for _, p := range probes {
		msg, err := p.probe()
		cond := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: msg}
		if err != nil {
			cond = corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: err.Error()}
		}
		cs := &corev1.ComponentStatus{
			TypeMeta:   metav1.TypeMeta{Kind: "ComponentStatus", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: p.name},
			Conditions: []corev1.ComponentCondition{cond},
		}
		items = append(items, &persistence.Item{Key: persistence.Key{Resource: "componentstatuses", Name: p.name}, Revision: rev, Object: cs})
	}
	return items
}

// listComponents answers GET on componentstatuses.
func (s *Server) listComponents(c echo.Context, rq *request) error {
	items := s.componentStatuses(c.Request().Context())
	return s.writePage(c, rq, &page{items: items, meta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.store.Revision(), 10)}})
}

// getComponent answers GET on one componentstatus.
func (s *Server) getComponent(c echo.Context, rq *request) error {
	for _, it := range s.componentStatuses(c.Request().Context()) {
		if it.Key.Name == rq.name {
			return writeObject(c, http.StatusOK, it.Object)
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: "componentstatuses"}, rq.name)
}
