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
	probes := []componentProbe{
		{"store-0", func() (string, error) {
			// A read of a namespace every cluster has proves the cache answers.
			_, err := s.store.Get(persistence.Key{Resource: "namespaces", Name: "default"})
			return fmt.Sprintf(`{"health":"true","revision":"%d"}`, rev), err
		}},
		{"controller-manager", func() (string, error) { return s.controlPlaneHealth(ctx) }},
	}
	probes = append(probes, s.replicaProbes(ctx)...)
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
		items = append(items, persistence.NewItem(persistence.Key{Resource: "componentstatuses", Name: p.name}, rev, cs))
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
			return writeObject(c, http.StatusOK, it.Object())
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: "componentstatuses"}, rq.name)
}

// componentProbe is one entry of componentstatuses: its name and how to probe it.
type componentProbe struct {
	name  string
	probe func() (string, error)
}

// controlPlaneHealth probes the actor system: this replica's when it runs it (the
// leader, or a store of one), else the leader's as far as this replica knows it.
func (s *Server) controlPlaneHealth(ctx context.Context) (string, error) {
	if sys := s.actors.Load(); sys != nil {
		return "ok", sys.Healthy(ctx)
	}
	if leader, ok := s.replica.Leader(); ok && leader.Name != s.name {
		return fmt.Sprintf("runs on the leader %s", leader.Name), nil
	}
	return "", fmt.Errorf("no replica runs the control plane (no leader, or it is starting)")
}

// replicaProbes are one entry per master replica, named replica-<name>, as the real
// API server lists its etcd members; a store of one has none.
func (s *Server) replicaProbes(ctx context.Context) []componentProbe {
	if !s.replica.Replicated() {
		return nil
	}
	ms, err := s.replica.Members(ctx)
	if err != nil {
		return []componentProbe{{"replica-" + s.name, func() (string, error) { return "", err }}}
	}
	out := make([]componentProbe, 0, len(ms))
	for _, m := range ms {
		out = append(out, componentProbe{"replica-" + m.Name, func() (string, error) {
			role := "follower"
			if m.Leader {
				role = "leader"
			}
			healthy := m.Reachable
			if m.Name == s.name {
				healthy = s.replica.Ready()
			}
			if !healthy {
				return "", fmt.Errorf("replica %s (%s, %s) is unreachable or not ready", m.Name, m.PeerAddress, role)
			}
			return fmt.Sprintf(`{"health":"true","role":"%s","revision":"%d"}`, role, m.Revision), nil
		}})
	}
	return out
}
