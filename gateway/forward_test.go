package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/gateway/authn"
	"github.com/kubeactor/kubeactor/persistence"
)

// fakeReplica is a follower's view of a replicated store: who leads, and the read
// barrier, counted.
type fakeReplica struct {
	mu         sync.Mutex
	leader     persistence.Member
	hasLeader  bool
	isLeader   bool
	ready      bool
	barriers   int
	barrierErr error
}

func (f *fakeReplica) Replicated() bool { return true }
func (f *fakeReplica) IsLeader() bool   { f.mu.Lock(); defer f.mu.Unlock(); return f.isLeader }
func (f *fakeReplica) Ready() bool      { f.mu.Lock(); defer f.mu.Unlock(); return f.ready }
func (f *fakeReplica) Leader() (persistence.Member, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader, f.hasLeader
}
func (f *fakeReplica) Members(context.Context) ([]persistence.Member, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []persistence.Member{f.leader, {Name: "m2", PeerAddress: "127.0.0.1:1", Voter: true, Reachable: true}}, nil
}
func (f *fakeReplica) RemoveMember(context.Context, string) error { return nil }
func (f *fakeReplica) ReadBarrier(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.barriers++
	return f.barrierErr
}
func (f *fakeReplica) count() int { f.mu.Lock(); defer f.mu.Unlock(); return f.barriers }

// follower is a gateway named m2 with no actor system, whose store says the leader
// is at leaderAddr ("" for no leader). insecure and secure are its two ports.
type follower struct {
	server           *Server
	replica          *fakeReplica
	insecure, secure *httptest.Server
}

func newFollower(t *testing.T, leaderAddr string) *follower {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	store, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	tokens, err := authn.ParseTokenFile([]byte("secret,alice,uid-7,\"devs,ops\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: store, Name: "m2", Log: log, OpenAPI: http.NotFoundHandler(),
		Authenticator: &authn.Union{Members: []authn.Authenticator{tokens}}})
	if err != nil {
		t.Fatalf("new gateway: %v", err)
	}
	f := &follower{server: srv, replica: &fakeReplica{ready: true}}
	if leaderAddr != "" {
		f.replica.leader, f.replica.hasLeader = persistence.Member{Name: "m1", PeerAddress: leaderAddr, Leader: true, Voter: true, Reachable: true}, true
	}
	srv.replica = f.replica
	f.insecure = httptest.NewServer(srv.Handler())
	f.secure = httptest.NewServer(srv.SecureHandler())
	t.Cleanup(func() {
		f.insecure.Close()
		f.secure.Close()
		_ = store.Close()
	})
	return f
}

// send makes one request and returns its code, body and headers.
func send(t *testing.T, method, url, body string, header ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header
}

// statusOfBody decodes a Status answer.
func statusOfBody(t *testing.T, body string) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil || st.Kind != "Status" {
		t.Fatalf("not a Status (%v): %s", err, body)
	}
	return st
}

// seen is what a fake leader received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) add(r *http.Request) { s.mu.Lock(); s.reqs = append(s.reqs, r); s.mu.Unlock() }
func (s *seen) all() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

func TestForwardToFakeLeader(t *testing.T) {
	rec := &seen{}
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		rec.add(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Audit-Id", "leader-side")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`)
	}))
	defer leader.Close()
	f := newFollower(t, leader.Listener.Addr().String())

	tests := []struct {
		name, method, url, path string
		header                  []string
		user, uid               string
		groups                  []string
	}{
		{"insecure POST is anonymous", "POST", f.insecure.URL, "/api/v1/namespaces/default/pods", nil,
			admission.Anonymous.Name, "", admission.Anonymous.Groups},
		{"secure POST carries the token's user, spoofed headers replaced", "POST", f.secure.URL, "/api/v1/namespaces/default/pods",
			[]string{"Authorization", "Bearer secret", HeaderPeerUser, "root", HeaderPeerGroup, "system:masters"},
			"alice", "uid-7", []string{"devs", "ops"}},
		{"DELETE", "DELETE", f.insecure.URL, "/api/v1/namespaces/default/pods/p", nil, admission.Anonymous.Name, "", admission.Anonymous.Groups},
		{"exec GET is a connection", "GET", f.insecure.URL, "/api/v1/namespaces/default/pods/p/exec", nil, admission.Anonymous.Name, "", admission.Anonymous.Groups},
		{"service proxy GET", "GET", f.insecure.URL, "/api/v1/namespaces/default/services/s/proxy/x", nil, admission.Anonymous.Name, "", admission.Anonymous.Groups},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := append([]string{"X-Request-Id", "trace-" + tc.method}, tc.header...)
			code, body, h := send(t, tc.method, tc.url+tc.path, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, hdr...)
			if code != http.StatusCreated {
				t.Fatalf("code %d: %s", code, body)
			}
			if ids := h.Values("Audit-Id"); len(ids) != 1 || ids[0] != "trace-"+tc.method {
				t.Errorf("Audit-Id %q, want the request's trace id once", ids)
			}
			reqs := rec.all()
			if len(reqs) != i+1 {
				t.Fatalf("leader saw %d requests, want %d", len(reqs), i+1)
			}
			r := reqs[i]
			if r.Method != tc.method || r.URL.Path != tc.path {
				t.Errorf("leader saw %s %s", r.Method, r.URL.Path)
			}
			if got := r.Header.Get(HeaderPeerUser); got != tc.user {
				t.Errorf("user %q, want %q", got, tc.user)
			}
			if got := r.Header.Get(HeaderPeerUID); got != tc.uid {
				t.Errorf("uid %q, want %q", got, tc.uid)
			}
			if got := r.Header.Values(HeaderPeerGroup); strings.Join(got, ",") != strings.Join(tc.groups, ",") {
				t.Errorf("groups %q, want %q", got, tc.groups)
			}
			if got := r.Header.Get(HeaderPeerFrom); got != "m2" {
				t.Errorf("from %q", got)
			}
			if got := r.Header.Get("X-Request-Id"); got != "trace-"+tc.method {
				t.Errorf("trace %q", got)
			}
			if r.Header.Get("Authorization") != "" {
				t.Errorf("credentials forwarded")
			}
		})
	}
	// Reads stay on the follower: nothing more reaches the leader.
	if code, body, _ := send(t, "GET", f.insecure.URL+"/api/v1/namespaces/default/pods", ""); code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	if n := len(rec.all()); n != len(tests) {
		t.Errorf("a read reached the leader (%d requests)", n)
	}
	// An unauthenticated secure request is refused by the follower itself.
	if code, _, _ := send(t, "POST", f.secure.URL+"/api/v1/namespaces/default/pods", "{}", "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
		t.Errorf("bad token: %d, want 401", code)
	}
	if n := len(rec.all()); n != len(tests) {
		t.Errorf("an unauthenticated request reached the leader")
	}
}

func TestForwardToRealLeader(t *testing.T) {
	plugin := &noConnect{}
	h := newHarness(t, harnessOptions{admission: admission.Chain{plugin}})
	peer := httptest.NewServer(h.server.PeerHandler())
	defer peer.Close()
	f := newFollower(t, peer.Listener.Addr().String())

	code, body, _ := send(t, "POST", f.secure.URL+"/api/v1/namespaces/default/pods", podJSON("via-follower"), "Authorization", "Bearer secret")
	if code != http.StatusCreated {
		t.Fatalf("create through the follower: %d %s", code, body)
	}
	if _, err := h.store.Get(persistence.Key{Resource: "pods", Namespace: "default", Name: "via-follower"}); err != nil {
		t.Fatalf("not on the leader: %v", err)
	}
	a, ok := plugin.last("pods", "via-follower")
	if !ok || a.User.Name != "alice" || strings.Join(a.User.Groups, ",") != "devs,ops" {
		t.Errorf("admission saw %+v, want alice in devs,ops", a.User)
	}
	// The leader's own answers come back unchanged: a conflict stays a conflict.
	code, body, _ = send(t, "POST", f.insecure.URL+"/api/v1/namespaces/default/pods", podJSON("via-follower"))
	if code != http.StatusConflict || statusOfBody(t, body).Reason != metav1.StatusReasonAlreadyExists {
		t.Errorf("second create: %d %s, want 409 AlreadyExists", code, body)
	}
}

func TestForwardFailures(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := closed.Addr().String()
	closed.Close()
	hangup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // the leader dies after it got the request
		}
	}))
	defer hangup.Close()

	tests := []struct {
		name, leader string
		code         int
		retryAfter   string
	}{
		{"no leader", "", http.StatusServiceUnavailable, "1"},
		{"leader unreachable", unreachable, http.StatusServiceUnavailable, "1"},
		{"leader lost mid-request", hangup.Listener.Addr().String(), http.StatusGatewayTimeout, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFollower(t, tc.leader)
			code, body, h := send(t, "POST", f.insecure.URL+"/api/v1/namespaces/default/pods", podJSON("p"))
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, body)
			}
			if st := statusOfBody(t, body); st.Code != int32(tc.code) || st.Status != metav1.StatusFailure {
				t.Errorf("status %+v", st)
			}
			if got := h.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
		})
	}
}

func TestPeerHandlerNeverForwardsAgain(t *testing.T) {
	rec := &seen{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rec.add(r) }))
	defer other.Close()
	f := newFollower(t, other.Listener.Addr().String())
	peer := httptest.NewServer(f.server.PeerHandler())
	defer peer.Close()
	code, body, h := send(t, "POST", peer.URL+"/api/v1/namespaces/default/pods", podJSON("p"), HeaderPeerUser, "alice")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("write on a peer port of a non-leader: %d %s, want 503 with Retry-After", code, body)
	}
	if len(rec.all()) != 0 {
		t.Errorf("a forwarded request was forwarded again")
	}
	// The leader that has not started its control plane yet answers 503 too.
	f.replica.mu.Lock()
	f.replica.isLeader, f.replica.leader.Name = true, "m2"
	f.replica.mu.Unlock()
	if code, body, _ := send(t, "POST", f.insecure.URL+"/api/v1/namespaces/default/pods", podJSON("p")); code != http.StatusServiceUnavailable {
		t.Errorf("starting leader: %d %s, want 503", code, body)
	}
	if len(rec.all()) != 0 {
		t.Errorf("a starting leader forwarded a request")
	}
}

func TestReadBarrier(t *testing.T) {
	f := newFollower(t, "127.0.0.1:1")
	tests := []struct {
		query   string
		barrier bool
	}{
		{"", true},
		{"?resourceVersion=0", false},
		{"?resourceVersion=0&resourceVersionMatch=NotOlderThan", false},
		{"?resourceVersion=1&resourceVersionMatch=NotOlderThan", true}, // not applied here yet (revision 0)
		{"?resourceVersion=5", true},
		{"?limit=1", true},
		{"?watch=true&timeoutSeconds=1&resourceVersion=0", false},
	}
	for _, tc := range tests {
		t.Run("pods"+tc.query, func(t *testing.T) {
			before := f.replica.count()
			code, body, _ := send(t, "GET", f.insecure.URL+"/api/v1/namespaces/default/pods"+tc.query, "")
			if code != http.StatusOK {
				t.Fatalf("code %d: %s", code, body)
			}
			if got := f.replica.count() - before; (got == 1) != tc.barrier || got > 1 {
				t.Errorf("barriers %d, want barrier=%v", got, tc.barrier)
			}
		})
	}
	// A get waits for the barrier; a get at resourceVersion=0 does not.
	before := f.replica.count()
	send(t, "GET", f.insecure.URL+"/api/v1/namespaces/default", "")
	send(t, "GET", f.insecure.URL+"/api/v1/namespaces/default?resourceVersion=0", "")
	if got := f.replica.count() - before; got != 1 {
		t.Errorf("gets: %d barriers, want 1", got)
	}
	// Without a leader the barrier fails: a linearizable read is a 503, a read at 0 still served.
	f.replica.mu.Lock()
	f.replica.barrierErr = errors.New("no leader")
	f.replica.mu.Unlock()
	if code, body, h := send(t, "GET", f.insecure.URL+"/api/v1/namespaces/default/pods", ""); code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("barrier failed: %d %s, want 503", code, body)
	}
	if code, body, _ := send(t, "GET", f.insecure.URL+"/api/v1/namespaces/default/pods?resourceVersion=0", ""); code != http.StatusOK {
		t.Errorf("read at 0 without leader: %d %s", code, body)
	}
}

func TestBarrierNeeded(t *testing.T) {
	tests := []struct {
		watch     bool
		rv, match string
		local     int64
		want      bool
	}{
		{false, "", "", 10, true},
		{false, "0", "", 10, false},
		{false, "7", "", 10, true},
		{false, "7", "Exact", 10, true},
		{false, "7", "NotOlderThan", 10, false},
		{false, "11", "NotOlderThan", 10, true},
		{true, "", "", 10, false},
		{true, "0", "", 10, false},
		{true, "10", "", 10, false},
		{true, "11", "", 10, true},
	}
	for _, tc := range tests {
		if got := barrierNeeded(tc.watch, tc.rv, tc.match, tc.local); got != tc.want {
			t.Errorf("barrierNeeded(watch=%v, %q, %q, %d) = %v, want %v", tc.watch, tc.rv, tc.match, tc.local, got, tc.want)
		}
	}
}

func TestNeedsLeader(t *testing.T) {
	tests := []struct {
		method, route string
		want          bool
	}{
		{"GET", "/api/v1/namespaces/:namespace/pods", false},
		{"GET", "/api/v1/namespaces/:namespace/pods/:name/log", false},
		{"GET", "/api/v1/namespaces/:namespace/pods/:name/exec", true},
		{"GET", "/api/v1/namespaces/:namespace/pods/:name/proxy/*", true},
		{"GET", "/api/v1/proxy/*", true},
		{"GET", "/api/v1/namespaces/:namespace/pods/:name/portforward", true},
		{"POST", "/api/v1/namespaces/:namespace/pods", true},
		{"PUT", "/api/v1/namespaces/:namespace/pods/:name/status", true},
		{"PATCH", "/api/v1/nodes/:name", true},
		{"DELETE", "/api/v1/namespaces/:namespace/pods/:name", true},
		{"DELETE", "/kubeactor/v1/members/:name", false},
		{"POST", "/debug/pprof/*", false},
		{"GET", "/api/v1/proxy", false},
	}
	for _, tc := range tests {
		if got := needsLeader(tc.method, tc.route); got != tc.want {
			t.Errorf("needsLeader(%s %s) = %v, want %v", tc.method, tc.route, got, tc.want)
		}
	}
}

func TestReadyzAndMembers(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	if code, _, _ := h.do("GET", "/readyz", "", ""); code != http.StatusOK {
		t.Errorf("store of one with its actors: readyz %d", code)
	}
	code, body, _ := h.do("GET", "/kubeactor/v1/members", "", "")
	var ml MemberList
	if code != http.StatusOK || json.Unmarshal([]byte(body), &ml) != nil || len(ml.Items) != 1 || ml.Items[0].Role != "leader" {
		t.Errorf("members of a store of one: %d %s", code, body)
	}
	if code, body, _ := h.do("DELETE", "/kubeactor/v1/members/m9", "", ""); code != http.StatusBadRequest {
		t.Errorf("remove on a store of one: %d %s, want 400", code, body)
	}

	f := newFollower(t, "127.0.0.1:1")
	if code, _, _ := send(t, "GET", f.insecure.URL+"/readyz", ""); code != http.StatusOK {
		t.Errorf("ready follower: %d", code)
	}
	if code, _, _ := send(t, "GET", f.insecure.URL+"/livez", ""); code != http.StatusOK {
		t.Errorf("livez: %d", code)
	}
	f.replica.mu.Lock()
	f.replica.ready = false
	f.replica.mu.Unlock()
	if code, _, _ := send(t, "GET", f.insecure.URL+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("follower behind: readyz %d, want 503", code)
	}
	if code, _, _ := send(t, "GET", f.insecure.URL+"/livez", ""); code != http.StatusOK {
		t.Errorf("livez of a follower behind: %d", code)
	}
	f.replica.mu.Lock()
	f.replica.ready, f.replica.isLeader = true, true
	f.replica.mu.Unlock()
	if code, _, _ := send(t, "GET", f.insecure.URL+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("leader without its control plane: readyz %d, want 503", code)
	}

	code, body, _ = send(t, "GET", f.insecure.URL+"/kubeactor/v1/members", "")
	if code != http.StatusOK || json.Unmarshal([]byte(body), &ml) != nil || len(ml.Items) != 2 || ml.Items[0].Role != "leader" || ml.Items[1].Role != "follower" {
		t.Errorf("members: %d %s", code, body)
	}
	if code, body, _ := send(t, "DELETE", f.insecure.URL+"/kubeactor/v1/members/nobody", ""); code != http.StatusNotFound {
		t.Errorf("remove unknown: %d %s", code, body)
	}
	if code, body, _ := send(t, "DELETE", f.insecure.URL+"/kubeactor/v1/members/m2", ""); code != http.StatusOK {
		t.Errorf("remove m2: %d %s", code, body)
	}
	// componentstatuses: one entry per replica besides the others; the control plane
	// is the leader's.
	code, body, _ = send(t, "GET", f.insecure.URL+"/api/v1/componentstatuses", "")
	for _, want := range []string{`"replica-m1"`, `"replica-m2"`, `"controller-manager"`, `"store-0"`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("componentstatuses lacks %s: %d %s", want, code, body)
		}
	}
}
