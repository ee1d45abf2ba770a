package server

import (
	"net/url"
	"time"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// LogQuery exposes a parsed /containerLogs query to the tests.
type LogQuery struct {
	Opts       runtime.LogOptions
	Previous   bool
	LimitBytes int64
}

func ParseLogQuery(q url.Values, now time.Time) (LogQuery, error) {
	lr, err := parseLogQuery(q, now)
	return LogQuery{Opts: lr.opts, Previous: lr.previous, LimitBytes: lr.limitBytes}, err
}
