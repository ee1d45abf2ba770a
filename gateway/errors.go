package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/persistence"
)

// errModified is the real API server's explanation of a failed optimistic update.
var errModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// handleError is the one place where an error becomes an HTTP answer: a metav1.Status
// with the matching code. Handlers return errors; Echo calls this.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var rq *request
	if v, ok := c.Get(requestKey).(*request); ok {
		rq = v
	}
	st := toStatus(err, rq)
	if st.Code == http.StatusInternalServerError && s.log != nil {
		s.log.WithFields(logrus.Fields{"path": c.Request().URL.Path, "error": err}).Error("internal error")
	}
	if st.Code == http.StatusServiceUnavailable && st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	_ = writeJSON(c, int(st.Code), st)
}

// toStatus maps err to the Status the client gets. rq gives the resource and name
// for errors that do not carry them (it may be nil).
func toStatus(err error, rq *request) *metav1.Status {
	gr := schema.GroupResource{}
	name := ""
	if rq != nil {
		gr.Resource = rq.res.Name
		name = rq.name
	}
	var st *metav1.Status
	var apiStatus apierrors.APIStatus
	var he *echo.HTTPError
	var invalid *actors.InvalidError
	switch {
	case errors.As(err, &apiStatus):
		s := apiStatus.Status()
		st = &s
	case errors.As(err, &invalid):
		st = statusOf(apierrors.NewInvalid(schema.GroupKind{Kind: invalid.Kind}, invalid.Name, invalid.Causes))
	case errors.Is(err, persistence.ErrNotFound):
		st = statusOf(apierrors.NewNotFound(gr, name))
	case errors.Is(err, persistence.ErrAlreadyExists):
		st = statusOf(apierrors.NewAlreadyExists(gr, name))
	case errors.Is(err, persistence.ErrConflict):
		st = statusOf(apierrors.NewConflict(gr, name, errModified))
	case errors.Is(err, persistence.ErrCompacted):
		st = statusOf(apierrors.NewResourceExpired(err.Error()))
	case errors.Is(err, persistence.ErrInvalid):
		st = statusOf(apierrors.NewBadRequest(err.Error()))
	case errors.Is(err, persistence.ErrNotLeader): // leadership moved while the write was on its way
		st = statusOf(unavailable("this replica stopped being the leader; retry").(*apierrors.StatusError))
	case errors.Is(err, actors.ErrUnknownResource):
		st = statusOf(apierrors.NewMethodNotSupported(gr, "write"))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, actors.ErrTimeout):
		st = statusOf(apierrors.NewTimeoutError(fmt.Sprintf("the request did not complete in time: %v", err), 1))
	case errors.As(err, &he):
		st = statusOfHTTP(he)
	default:
		st = statusOf(apierrors.NewInternalError(err))
	}
	st.Kind, st.APIVersion = "Status", "v1"
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	return st
}

func statusOf(err *apierrors.StatusError) *metav1.Status {
	st := err.ErrStatus
	return &st
}

// statusOfHTTP covers the errors Echo raises itself (no route, wrong method, panics).
func statusOfHTTP(he *echo.HTTPError) *metav1.Status {
	msg := fmt.Sprint(he.Message)
	switch he.Code {
	case http.StatusNotFound:
		return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
			Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource",
			Details: &metav1.StatusDetails{}}
	case http.StatusMethodNotAllowed:
		return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed,
			Reason: metav1.StatusReasonMethodNotAllowed, Message: "the server does not allow this method on the requested resource"}
	case http.StatusRequestEntityTooLarge:
		return statusOf(apierrors.NewRequestEntityTooLargeError(msg))
	case http.StatusServiceUnavailable:
		return statusOf(apierrors.NewServiceUnavailable(msg))
	default:
		return statusOf(apierrors.NewGenericServerResponse(he.Code, "", schema.GroupResource{}, "", msg, 0, he.Code >= 500))
	}
}

// unsupportedMediaType is the 415 answer for a body type this server cannot read.
func unsupportedMediaType(contentType string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got %q)", contentType),
	}}
}

func isConflict(err error) bool {
	return errors.Is(err, persistence.ErrConflict) || apierrors.IsConflict(err)
}

func isAlreadyExists(err error) bool {
	return errors.Is(err, persistence.ErrAlreadyExists) || apierrors.IsAlreadyExists(err)
}

func isNotFound(err error) bool {
	return errors.Is(err, persistence.ErrNotFound) || apierrors.IsNotFound(err)
}
