package cli

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// exitCode is returned by a client command that has already printed its errors the
// way kubectl does; run exits with it and prints nothing more.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// report prints errs kubectl-style to w and returns the exit code error, or nil when
// there are no errors.
func report(w io.Writer, errs ...error) error {
	code := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		fmt.Fprintln(w, kubectlMessage(err))
		code = 1
	}
	if code == 0 {
		return nil
	}
	return exitCode(code)
}

// kubectlMessage is the line kubectl prints for err: "Error from server (Reason):
// message" for an API Status, a hint for a refused connection, "error: ..." otherwise.
func kubectlMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		switch {
		case s.Reason == metav1.StatusReasonUnauthorized:
			return fmt.Sprintf("error: You must be logged in to the server (%s)", s.Message)
		case s.Reason != "":
			return fmt.Sprintf("Error from server (%s): %s", s.Reason, s.Message)
		default:
			return fmt.Sprintf("Error from server: %s", s.Message)
		}
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if strings.Contains(uerr.Err.Error(), "connection refused") {
			host := uerr.URL
			if u, perr := url.Parse(uerr.URL); perr == nil {
				host = u.Host
			}
			return fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", host)
		}
		return fmt.Sprintf("Unable to connect to the server: %v", uerr.Err)
	}
	return "error: " + err.Error()
}
