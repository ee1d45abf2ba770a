package apiclient

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// Servers splits a --server value that lists several API servers (master replicas,
// "http://a:8080,http://b:8080") and checks each URL.
func Servers(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("server %q: want http://host:port or https://host:port", s)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("server %q: no URL", list)
	}
	return out, nil
}

// Failover is an http.RoundTripper over several API servers (master replicas): it
// sends each request to the server that answered last and, when that one cannot be
// reached (a connection error: nothing was sent, so any request may be retried),
// to the next in turn. Any answer, an error Status included, is the server's: it
// is returned as is.
type Failover struct {
	next    http.RoundTripper
	servers []*url.URL
	cur     atomic.Int32
}

// NewFailover sends requests through next to servers (URLs; their paths are ignored).
func NewFailover(servers []string, next http.RoundTripper) (*Failover, error) {
	f := &Failover{next: next}
	for _, s := range servers {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", s, err)
		}
		f.servers = append(f.servers, u)
	}
	if len(f.servers) == 0 {
		return nil, errors.New("failover: no server")
	}
	return f, nil
}

// Current is the server requests go to now.
func (f *Failover) Current() string { return f.servers[f.cur.Load()].String() }

// RoundTrip implements http.RoundTripper.
func (f *Failover) RoundTrip(req *http.Request) (*http.Response, error) {
	start := int(f.cur.Load())
	var last error
	for i := range f.servers {
		k := (start + i) % len(f.servers)
		out := req.Clone(req.Context())
		out.URL.Scheme, out.URL.Host, out.Host = f.servers[k].Scheme, f.servers[k].Host, ""
		if i > 0 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, last // the body is gone with the first attempt
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, last
			}
			out.Body = body
		}
		resp, err := f.next.RoundTrip(out)
		if err == nil {
			if k != start {
				f.cur.CompareAndSwap(int32(start), int32(k))
			}
			return resp, nil
		}
		if req.Context().Err() != nil || !unreachable(err) {
			return nil, err
		}
		last = err
	}
	return nil, last
}

// unreachable tells whether err is a failure to connect (the request was not sent).
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
