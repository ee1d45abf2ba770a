package server

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// logRequest is what a /containerLogs query asks for.
type logRequest struct {
	opts       runtime.LogOptions
	previous   bool
	limitBytes int64 // 0 for no limit
}

// parseLogQuery reads follow, previous, tailLines, timestamps, sinceSeconds,
// sinceTime and limitBytes; now turns sinceSeconds into a time.
func parseLogQuery(q url.Values, now time.Time) (logRequest, error) {
	lr := logRequest{opts: runtime.LogOptions{Tail: -1}}
	var err error
	if lr.opts.Follow, err = boolParam(q, "follow"); err != nil {
		return lr, err
	}
	if lr.previous, err = boolParam(q, "previous"); err != nil {
		return lr, err
	}
	if lr.opts.Timestamps, err = boolParam(q, "timestamps"); err != nil {
		return lr, err
	}
	if lr.opts.Follow && lr.previous {
		return lr, errors.New("follow and previous cannot be used together")
	}
	if v := q.Get("tailLines"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return lr, fmt.Errorf("tailLines must be a non-negative integer, not %q", v)
		}
		lr.opts.Tail = n
	}
	if v := q.Get("limitBytes"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return lr, fmt.Errorf("limitBytes must be a positive integer, not %q", v)
		}
		lr.limitBytes = n
	}
	secs, since := q.Get("sinceSeconds"), q.Get("sinceTime")
	if secs != "" && since != "" {
		return lr, errors.New("at most one of sinceTime or sinceSeconds may be specified")
	}
	if secs != "" {
		n, err := strconv.ParseInt(secs, 10, 64)
		if err != nil || n < 1 {
			return lr, fmt.Errorf("sinceSeconds must be a positive integer, not %q", secs)
		}
		lr.opts.Since = now.Add(-time.Duration(n) * time.Second)
	}
	if since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return lr, fmt.Errorf("sinceTime must be an RFC3339 time, not %q", since)
		}
		lr.opts.Since = t
	}
	return lr, nil
}

// boolParam reads a boolean query parameter; absent is false.
func boolParam(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, not %q", name, v)
	}
	return b, nil
}

// execRequest is what an /exec query asks for.
type execRequest struct {
	cmd                        []string
	stdin, stdout, stderr, tty bool
}

// parseExecQuery reads the command and the streams. It takes both the API's names
// (stdin=true, ...) and the kubelet's (input=1, output=1, error=1, tty=1).
func parseExecQuery(q url.Values) (execRequest, error) {
	er, err := parseStreams(q)
	if err == nil && len(er.cmd) == 0 {
		err = errors.New("you must specify at least one command for the container")
	}
	return er, err
}

// parseAttachQuery reads the streams of an attach, which takes no command.
func parseAttachQuery(q url.Values) (execRequest, error) {
	er, err := parseStreams(q)
	er.cmd = nil
	return er, err
}

// parseStreams reads the streams of an exec or attach query (and exec's command).
func parseStreams(q url.Values) (execRequest, error) {
	er := execRequest{cmd: q["command"]}
	flag := func(names ...string) bool {
		for _, n := range names {
			if v := q.Get(n); v == "1" || strings.EqualFold(v, "true") {
				return true
			}
		}
		return false
	}
	er.stdin = flag("stdin", "input")
	er.stdout = flag("stdout", "output")
	er.stderr = flag("stderr", "error")
	er.tty = flag("tty")
	if er.tty {
		er.stderr = false // a terminal merges the two
	}
	if !er.stdin && !er.stdout && !er.stderr {
		return er, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	return er, nil
}

// podPath is a request's pod and container, from /{verb}/{ns}/{pod}[/{uid}]/{container}.
type podPath struct {
	namespace, pod, uid, container string
}

// parsePodPath splits the path after the verb: want containers says whether the last
// segment is a container (exec, run, logs) or the pod itself ends it (portForward).
func parsePodPath(rest string, container bool) (podPath, bool) {
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	for _, p := range parts {
		if p == "" {
			return podPath{}, false
		}
	}
	switch {
	case container && len(parts) == 3:
		return podPath{namespace: parts[0], pod: parts[1], container: parts[2]}, true
	case container && len(parts) == 4:
		return podPath{namespace: parts[0], pod: parts[1], uid: parts[2], container: parts[3]}, true
	case !container && len(parts) == 2:
		return podPath{namespace: parts[0], pod: parts[1]}, true
	case !container && len(parts) == 3:
		return podPath{namespace: parts[0], pod: parts[1], uid: parts[2]}, true
	}
	return podPath{}, false
}
