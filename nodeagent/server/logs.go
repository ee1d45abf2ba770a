package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// errLimitReached stops a log stream at limitBytes.
var errLimitReached = errors.New("server: log limit reached")

// flushWriter sends the 200 header with the first byte and flushes every write, so a
// follower sees lines as they come. stdout and stderr share it, so writes lock.
type flushWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	left    int64 // bytes still allowed; negative for no limit
	stop    context.CancelFunc
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left == 0 {
		return 0, errLimitReached
	}
	n := len(p)
	if f.left > 0 && int64(len(p)) > f.left {
		p = p[:f.left]
	}
	f.start()
	written, err := f.w.Write(p)
	if f.left > 0 {
		f.left -= int64(written)
	}
	_ = f.rc.Flush()
	if err != nil {
		return written, err
	}
	if f.left == 0 {
		f.stop()
		if written < n {
			return written, errLimitReached
		}
	}
	return n, nil
}

// start sends the header once.
func (f *flushWriter) start() {
	if !f.started {
		f.started = true
		f.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		f.w.WriteHeader(http.StatusOK)
		_ = f.rc.Flush()
	}
}

// serveLogs answers /containerLogs/{ns}/{pod}/{container}: the container's output,
// streamed while it is followed.
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	pp, ok := parsePodPath(r.PathValue("path"), true)
	if !ok {
		writeError(w, http.StatusNotFound, errors.New("expected /containerLogs/{namespace}/{pod}/{container}"))
		return
	}
	lr, err := parseLogQuery(r.URL.Query(), s.now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	id, ok := s.resolve(w, pp, lr.previous)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	fw := &flushWriter{w: w, rc: http.NewResponseController(w), left: -1, stop: cancel}
	if lr.limitBytes > 0 {
		fw.left = lr.limitBytes
	}
	if lr.opts.Follow {
		fw.mu.Lock()
		fw.start() // a follower learns at once that the stream is open
		fw.mu.Unlock()
	}
	err = s.cfg.Runtime.Logs(ctx, id, lr.opts, fw, fw)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	switch {
	case err == nil, errors.Is(err, errLimitReached), ctx.Err() != nil:
		fw.start()
	case !fw.started:
		writeError(w, errorCode(err), fmt.Errorf("logs of %s/%s %s: %w", pp.namespace, pp.pod, pp.container, err))
	default:
		s.log.WithError(err).WithField("pod", pp.namespace+"/"+pp.pod).Warn("log stream failed")
	}
}
