package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/persistence"
)

// Master replicas (issue 13). Every replica serves the API; the actor system (the
// controllers, the scheduler and every object actor) runs on the leader only. So:
//
//   - a write (POST, PUT, PATCH, DELETE) or a connection to exec, attach, portforward
//     or proxy on a follower is authenticated and authorized there, then forwarded to
//     the leader's peer port, where PeerHandler runs it through the same routes as the
//     insecure port, as the user the follower named;
//   - a read (get, list) waits for the store's read barrier first, so that it sees
//     every write acknowledged before it (linearizable), unless it asked for
//     resourceVersion=0 or resourceVersionMatch=NotOlderThan, which any replica's own
//     state answers (Kubernetes' definition);
//   - a watch is served from the local store: every replica has the same revisions
//     and the same change feed, so a watch resumes on any replica.
//
// The peer port is a trusted network: PeerHandler believes the user the peer
// headers name, as the insecure port serves anyone. Bind --peer-address to an
// address only the replicas reach (loopback, a private network or a firewall rule).

// Peer headers: what a follower tells the leader about a forwarded request. They are
// read by PeerHandler only; a follower sets them itself, overwriting any a client sent.
const (
	HeaderPeerUser  = "X-Kubeactor-Peer-User"
	HeaderPeerUID   = "X-Kubeactor-Peer-Uid"
	HeaderPeerGroup = "X-Kubeactor-Peer-Group" // one header line per group
	HeaderPeerFrom  = "X-Kubeactor-Peer-From"  // the forwarding replica's name
	headerRequestID = "X-Request-Id"
)

// replicaView is what the gateway asks the store about its replicas
// (*persistence.Store; tests give a fake leader).
type replicaView interface {
	Replicated() bool
	IsLeader() bool
	Leader() (persistence.Member, bool)
	Members(ctx context.Context) ([]persistence.Member, error)
	RemoveMember(ctx context.Context, name string) error
	ReadBarrier(ctx context.Context) error
	Ready() bool
}

// peerKey marks a request that came in on the peer port, with the user it names.
type peerKey struct{}

// uidKey is the echo context key of the authenticated user's uid (secure.go sets it).
const uidKey = "kubeactor.uid"

// peerUser is the user a forwarded request carries.
type peerUser struct {
	name, uid string
	groups    []string
	from      string
}

// PeerHandler serves the API requests other replicas forward to this one over the
// peer port (persistence.Replication.PeerHandler). The request is served as the
// insecure port serves it, without authentication or authorization (the forwarding
// replica did both), as the user its peer headers name (admission sees that user).
// It is never forwarded again: if this replica is not the leader (any more), a write
// gets 503.
func (s *Server) PeerHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := &peerUser{name: r.Header.Get(HeaderPeerUser), uid: r.Header.Get(HeaderPeerUID),
			groups: r.Header.Values(HeaderPeerGroup), from: r.Header.Get(HeaderPeerFrom)}
		if u.name == "" {
			u.name, u.groups = admission.Anonymous.Name, admission.Anonymous.Groups
		}
		s.echo.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerKey{}, u)))
	})
}

// peerOf returns the peer user of a request that came in on the peer port.
func peerOf(r *http.Request) (*peerUser, bool) {
	u, ok := r.Context().Value(peerKey{}).(*peerUser)
	return u, ok
}

// unavailable is a 503 Status that asks the client to retry in a second.
func unavailable(msg string) error {
	err := apierrors.NewServiceUnavailable(msg)
	err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: 1}
	return err
}

// connectSubresources are the subresources whose connections the leader admits.
var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true, "proxy": true}

// needsLeader tells whether a request on route (echo's route template) must be
// served by the replica that runs the actors: writes and connections.
func needsLeader(method, route string) bool {
	if strings.HasPrefix(route, "/kubeactor/") || strings.HasPrefix(route, "/debug/pprof") {
		return false // the store answers members itself; profiles are the replica's own
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return isConnectRoute(route)
	}
	return true
}

// isConnectRoute tells whether route connects to a subresource (the admission chain
// admits it with operation Connect).
func isConnectRoute(route string) bool {
	if strings.HasPrefix(route, "/api/v1/proxy/") {
		return true
	}
	route = strings.TrimSuffix(route, "/*")
	i := strings.LastIndexByte(route, '/')
	return i >= 0 && connectSubresources[route[i+1:]] && strings.Contains(route, "/:name/")
}

// isReadRoute tells whether route is a get, list or watch of stored objects (what
// the read barrier guards); and whether it is a watch.
func isReadRoute(c echo.Context) (read, watch bool) {
	route := c.Path()
	if !strings.HasPrefix(route, "/api/v1/") || isConnectRoute(route) || strings.HasSuffix(route, "/log") ||
		strings.Contains(route, "/componentstatuses") {
		return false, false
	}
	if strings.HasPrefix(route, "/api/v1/watch/") {
		return true, true
	}
	w := c.QueryParam("watch")
	return true, w == "true" || w == "1"
}

// barrierNeeded tells whether a read must wait for the read barrier before it is
// served from this replica's state, whose revision is local. A watch waits only
// when it starts from a revision this replica has not applied yet; resourceVersion=0
// is served as is; NotOlderThan N only when N is not applied here yet.
func barrierNeeded(watch bool, rv, match string, local int64) bool {
	if rv == "0" {
		return false
	}
	if watch || match == string(metav1.ResourceVersionMatchNotOlderThan) {
		n, err := strconv.ParseInt(rv, 10, 64)
		return err == nil && n > local
	}
	return true
}

// replicas is the middleware that sends a request where it is served: a write to the
// leader (forwarded from a follower), a read after the read barrier. For a store of
// one it costs two pointer loads.
func (s *Server) replicas(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.replica.Replicated() && s.actors.Load() != nil {
			return next(c) // a store of one, running: nothing to decide
		}
		req := c.Request()
		if needsLeader(req.Method, c.Path()) {
			if s.actors.Load() != nil {
				return next(c)
			}
			if _, peer := peerOf(req); peer || !s.replica.Replicated() || s.replica.IsLeader() {
				return unavailable("this replica is not the leader, or its control plane is starting; retry")
			}
			return s.peer.forward(c)
		}
		if !s.replica.Replicated() || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
			return next(c)
		}
		if read, watch := isReadRoute(c); read &&
			barrierNeeded(watch, c.QueryParam("resourceVersion"), c.QueryParam("resourceVersionMatch"), s.store.Revision()) {
			if err := s.replica.ReadBarrier(req.Context()); err != nil {
				if ctxErr := req.Context().Err(); ctxErr != nil {
					return ctxErr
				}
				return unavailable(fmt.Sprintf("no linearizable read: %v (resourceVersion=0 reads this replica's state)", err))
			}
		}
		return next(c)
	}
}

// forwarder forwards requests to the leader's peer port.
type forwarder struct {
	s         *Server
	transport *http.Transport
}

func newForwarder(s *Server) *forwarder {
	return &forwarder{s: s, transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// noLeader is the answer while the replicas have no leader (an election is going on,
// or a majority is down).
func noLeader() error {
	return unavailable("there is no leader among the master replicas (an election is in progress, or a majority is down); retry")
}

// forward sends the request to the leader's peer port and copies its answer back.
// The client gets the leader's answer, a 503 Status when no leader could be reached
// (nothing was sent: safe to retry), or a 504 Status when the leader was lost after
// the request was sent (it may or may not have been applied): never a false success.
func (f *forwarder) forward(c echo.Context) error {
	leader, ok := f.s.replica.Leader()
	if !ok || leader.PeerAddress == "" {
		return noLeader()
	}
	if leader.Name == f.s.name {
		return unavailable("this replica is the leader and its control plane is starting; retry")
	}
	req := c.Request()
	u := actors.UserOf(req.Context())
	uid, _ := c.Get(uidKey).(string)
	trace := actors.TraceID(req.Context())
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "http", leader.PeerAddress, leader.PeerAddress
			h := pr.Out.Header
			for _, k := range []string{HeaderPeerUser, HeaderPeerUID, HeaderPeerGroup, HeaderPeerFrom, "Authorization"} {
				h.Del(k)
			}
			h.Set(HeaderPeerUser, u.Name)
			if uid != "" {
				h.Set(HeaderPeerUID, uid)
			}
			for _, g := range u.Groups {
				h.Add(HeaderPeerGroup, g)
			}
			h.Set(HeaderPeerFrom, f.s.name)
			if trace != "" && h.Get("traceparent") == "" {
				h.Set(headerRequestID, trace)
			}
		},
		// The leader's Audit-Id is the same trace id, already set on this answer.
		ModifyResponse: func(resp *http.Response) error { resp.Header.Del("Audit-Id"); return nil },
		Transport:      f.transport,
		FlushInterval:  -1, // exec, attach and proxy stream
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client went away
			}
			f.s.handleError(forwardError(leader.Name, err), c)
		},
	}
	rp.ServeHTTP(c.Response(), req)
	return nil
}

// forwardError is the Status of a request the leader did not answer.
func forwardError(leader string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return unavailable(fmt.Sprintf("the leader %s cannot be reached: %v; retry", leader, op.Err))
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusGatewayTimeout, Reason: metav1.StatusReasonTimeout,
		Message: fmt.Sprintf("the leader %s was lost before it answered (%v): the request may or may not have been applied", leader, err),
	}}
}

// ReplicaInfo is one master replica as GET /kubeactor/v1/members lists it.
type ReplicaInfo struct {
	Name        string            `json:"name"`
	PeerAddress string            `json:"peerAddress"`
	Meta        map[string]string `json:"meta,omitempty"`
	Role        string            `json:"role"` // leader, follower or learner
	Revision    int64             `json:"revision"`
	LastContact *time.Time        `json:"lastContact,omitempty"`
	Reachable   bool              `json:"reachable"`
	// Actors says the answering replica's actor cluster has this replica among its
	// live members (actors/cluster.go): the controllers it owns run there.
	Actors bool `json:"actors,omitempty"`
}

// SetActorMembers gives the gateway this replica's view of the actor cluster: the
// names of the members its placement counts (listed by the members API).
func (s *Server) SetActorMembers(names []string) {
	s.actorMembers.Store(&names)
}

// MemberList is the answer of GET /kubeactor/v1/members.
type MemberList struct {
	Kind  string        `json:"kind"` // MemberList
	Items []ReplicaInfo `json:"items"`
}

// Meta keys a replica publishes to the others (persistence.Replication.Meta).
const (
	MetaAPI       = "api"        // the insecure API's URL
	MetaSecureAPI = "secure-api" // the secure API's URL
)

// mountReplicas registers /readyz and the members API.
func (s *Server) mountReplicas(e *echo.Echo) {
	e.GET("/readyz", s.readyz)
	e.GET("/kubeactor/v1/members", s.listMembers)
	e.DELETE("/kubeactor/v1/members/:name", s.removeMember)
}

// readyz is 200 when the store has a leader and has applied what it learned was
// committed, and, on the leader, once the control plane runs.
func (s *Server) readyz(c echo.Context) error {
	if !s.replica.Ready() {
		return c.String(http.StatusServiceUnavailable, "store not ready: no leader, or behind the commit index")
	}
	if s.replica.IsLeader() && (s.actors.Load() == nil || !s.booted.Load()) {
		return c.String(http.StatusServiceUnavailable, "leader: control plane starting")
	}
	return c.String(http.StatusOK, "ok")
}

// members lists the replicas (a store of one lists itself).
func (s *Server) members(ctx context.Context) ([]ReplicaInfo, error) {
	ms, err := s.replica.Members(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ReplicaInfo, 0, len(ms))
	for _, m := range ms {
		ri := ReplicaInfo{Name: m.Name, PeerAddress: m.PeerAddress, Meta: m.Meta, Role: "follower",
			Revision: m.Revision, Reachable: m.Reachable}
		switch {
		case m.Leader:
			ri.Role = "leader"
		case !m.Voter:
			ri.Role = "learner"
		}
		if !m.LastContact.IsZero() {
			t := m.LastContact
			ri.LastContact = &t
		}
		if !s.replica.Replicated() {
			ri.Name = s.name
		}
		if view := s.actorMembers.Load(); view != nil {
			ri.Actors = slices.Contains(*view, ri.Name)
		}
		out = append(out, ri)
	}
	return out, nil
}

// listMembers answers GET /kubeactor/v1/members.
func (s *Server) listMembers(c echo.Context) error {
	ms, err := s.members(c.Request().Context())
	if err != nil {
		return unavailable(fmt.Sprintf("members: %v", err))
	}
	return writeJSON(c, http.StatusOK, &MemberList{Kind: "MemberList", Items: ms})
}

// removeMember answers DELETE /kubeactor/v1/members/NAME: the store removes the
// replica from the Raft configuration through the leader.
func (s *Server) removeMember(c echo.Context) error {
	name := c.Param("name")
	if !s.replica.Replicated() {
		return apierrors.NewBadRequest("this server is a store of one: there is no other replica to remove")
	}
	ms, err := s.replica.Members(c.Request().Context())
	if err != nil {
		return unavailable(fmt.Sprintf("members: %v", err))
	}
	found := false
	for _, m := range ms {
		found = found || m.Name == name
	}
	if !found {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
			Reason: metav1.StatusReasonNotFound, Message: fmt.Sprintf("member %q not found", name),
			Details: &metav1.StatusDetails{Name: name, Kind: "members"}}}
	}
	if err := s.replica.RemoveMember(c.Request().Context(), name); err != nil {
		return unavailable(fmt.Sprintf("remove member %s: %v", name, err))
	}
	return writeJSON(c, http.StatusOK, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Details: &metav1.StatusDetails{Name: name, Kind: "members"}})
}
