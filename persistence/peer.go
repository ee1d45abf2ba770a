package persistence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The peer port carries two protocols on one TCP port: Raft's (whose connections
// begin with a small RPC-type byte) and HTTP (whose requests begin with an ASCII
// letter). The first byte of each accepted connection picks the protocol. HTTP paths
// under /raft/ are the store's own (join, remove, member info, read index, a
// follower's forwarded transactions); the others go to Replication.PeerHandler.

// peerLayer is raft.StreamLayer over the peer port; it hands HTTP connections to an
// http.Server through httpListener.
type peerLayer struct {
	ln        net.Listener
	addr      advertised
	raftConns chan net.Conn
	httpConns chan net.Conn
	done      chan struct{}
	once      sync.Once
}

var _ raft.StreamLayer = (*peerLayer)(nil)

// advertised is the peer address as configured (what the other members dial).
type advertised string

func (a advertised) Network() string { return "tcp" }
func (a advertised) String() string  { return string(a) }

func listenPeer(addr string) (*peerLayer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("peer port: %w", err)
	}
	l := &peerLayer{ln: ln, addr: advertised(addr), raftConns: make(chan net.Conn),
		httpConns: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l, nil
}

func (l *peerLayer) acceptLoop() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			_ = l.Close()
			return
		}
		go l.route(c)
	}
}

// route peeks at the first byte of c and hands it to Raft or to HTTP.
func (l *peerLayer) route(c net.Conn) {
	var b [1]byte
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, b[:]); err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &peekedConn{Conn: c, first: b[:]}
	to := l.raftConns
	if (b[0] >= 'A' && b[0] <= 'Z') || (b[0] >= 'a' && b[0] <= 'z') {
		to = l.httpConns
	}
	select {
	case to <- pc:
	case <-l.done:
		_ = c.Close()
	}
}

// Accept returns the next Raft connection.
func (l *peerLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.raftConns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *peerLayer) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.ln.Close()
	})
	return err
}

func (l *peerLayer) Addr() net.Addr { return l.addr }

// Dial opens a Raft connection to a member.
func (l *peerLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(address), timeout)
}

// httpListener is the HTTP side of the peer port.
type httpListener struct{ l *peerLayer }

func (h httpListener) Accept() (net.Conn, error) {
	select {
	case c := <-h.l.httpConns:
		return c, nil
	case <-h.l.done:
		return nil, net.ErrClosed
	}
}
func (h httpListener) Close() error   { return nil } // the peer layer closes the port
func (h httpListener) Addr() net.Addr { return h.l.addr }

// peekedConn gives back the byte read to route the connection.
type peekedConn struct {
	net.Conn
	first []byte
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// memberInfo is a replica's answer on /raft/info.
type memberInfo struct {
	Name        string            `json:"name"`
	PeerAddress string            `json:"peerAddress"`
	Meta        map[string]string `json:"meta,omitempty"`
	Revision    int64             `json:"revision"`
	Applied     uint64            `json:"applied"`
	at          time.Time         // when it was received
}

type joinRequest struct {
	Name        string `json:"name"`
	PeerAddress string `json:"peerAddress"`
	NonVoter    bool   `json:"nonVoter,omitempty"`
}

type readIndexResponse struct {
	Index uint64 `json:"index"`
}

func (r *replica) startHTTP() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /raft/join", r.handleJoin)
	mux.HandleFunc("POST /raft/remove", r.handleRemove)
	mux.HandleFunc("GET /raft/info", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, r.selfInfo())
	})
	mux.HandleFunc("GET /raft/readindex", r.handleReadIndex)
	mux.HandleFunc("POST /raft/apply", r.handleApply)
	mux.HandleFunc("/raft/", http.NotFound)
	if h := r.conf.PeerHandler; h != nil {
		mux.Handle("/", h)
	}
	r.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = r.http.Serve(httpListener{r.layer})
	}()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotLeader), errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost):
		code = http.StatusServiceUnavailable
	case errors.Is(err, ErrInvalid):
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}

// handleJoin adds the sender as a voter (or a non-voter, as it asks): on the leader,
// or forwarded to it.
func (r *replica) handleJoin(w http.ResponseWriter, req *http.Request) {
	var j joinRequest
	if err := json.NewDecoder(io.LimitReader(req.Body, 1<<16)).Decode(&j); err != nil || j.Name == "" || j.PeerAddress == "" {
		writeError(w, fmt.Errorf("%w: join needs a name and a peer address", ErrInvalid))
		return
	}
	if r.raft.State() != raft.Leader {
		r.forward(w, req.Context(), "/raft/join", j)
		return
	}
	add, what := r.raft.AddVoter, "voter"
	if j.NonVoter {
		add, what = r.raft.AddNonvoter, "non-voter"
	}
	if err := add(raft.ServerID(j.Name), raft.ServerAddress(j.PeerAddress), 0, 10*time.Second).Error(); err != nil {
		writeError(w, fmt.Errorf("add %s %s: %w", what, j.Name, err))
		return
	}
	r.log.WithField("member", j.Name).WithField("peerAddress", j.PeerAddress).WithField("suffrage", what).Info("member added")
	writeJSON(w, http.StatusOK, struct{}{})
}

func (r *replica) handleRemove(w http.ResponseWriter, req *http.Request) {
	var j joinRequest
	if err := json.NewDecoder(io.LimitReader(req.Body, 1<<16)).Decode(&j); err != nil || j.Name == "" {
		writeError(w, fmt.Errorf("%w: remove needs a name", ErrInvalid))
		return
	}
	if r.raft.State() != raft.Leader {
		r.forward(w, req.Context(), "/raft/remove", j)
		return
	}
	if err := r.raft.RemoveServer(raft.ServerID(j.Name), 0, 10*time.Second).Error(); err != nil {
		writeError(w, fmt.Errorf("remove member %s: %w", j.Name, err))
		return
	}
	r.log.WithField("member", j.Name).Info("member removed")
	writeJSON(w, http.StatusOK, struct{}{})
}

// forward sends a membership request to the leader and relays its answer.
func (r *replica) forward(w http.ResponseWriter, ctx context.Context, path string, body any) {
	addr, _ := r.raft.LeaderWithID()
	if addr == "" {
		writeError(w, fmt.Errorf("%w: no leader known", ErrNotLeader))
		return
	}
	code, msg, err := r.post(ctx, "http://"+string(addr)+path, body)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(msg)
}

func (r *replica) handleReadIndex(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
	defer cancel()
	index, err := r.readIndex(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, readIndexResponse{Index: index})
}

// post sends body as JSON and returns the status and body of the answer.
func (r *replica) post(ctx context.Context, url string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.cli.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, msg, err
}

func (r *replica) get(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := r.cli.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		err := fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
		if resp.StatusCode == http.StatusServiceUnavailable {
			err = fmt.Errorf("%w: %w", ErrNotLeader, err)
		}
		return err
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}

// join asks a member of a running cluster (peer URL) to add this replica, retrying
// for a while: the member may be starting or electing a leader.
func (r *replica) join(url string) error {
	url = strings.TrimSuffix(url, "/")
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		url = "http://" + url
	}
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		code, msg, err := r.post(ctx, url+"/raft/join", joinRequest{Name: r.name, PeerAddress: r.addr, NonVoter: r.conf.NonVoter})
		cancel()
		switch {
		case err != nil:
			last = err
		case code == http.StatusOK:
			r.log.WithField("via", url).Info("joined the cluster")
			return nil
		case code == http.StatusBadRequest:
			return fmt.Errorf("join %s: %s", url, strings.TrimSpace(string(msg)))
		default:
			last = fmt.Errorf("%s: %d %s", url, code, strings.TrimSpace(string(msg)))
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-r.stop:
			return fmt.Errorf("join %s: %w", url, ErrClosed)
		}
	}
	return fmt.Errorf("join %s: %w", url, last)
}

func (r *replica) remoteRemove(ctx context.Context, name string) error {
	addr, _ := r.raft.LeaderWithID()
	if addr == "" {
		return fmt.Errorf("remove member %s: %w: no leader known", name, ErrNotLeader)
	}
	code, msg, err := r.post(ctx, "http://"+string(addr)+"/raft/remove", joinRequest{Name: name})
	if err != nil {
		return fmt.Errorf("remove member %s: %w", name, err)
	}
	if code != http.StatusOK {
		return fmt.Errorf("remove member %s: leader answered %d: %s", name, code, strings.TrimSpace(string(msg)))
	}
	return nil
}

// remoteReadIndex asks the leader for its commit index (it confirms its leadership).
func (r *replica) remoteReadIndex(ctx context.Context) (uint64, error) {
	addr, id := r.raft.LeaderWithID()
	if addr == "" || string(id) == r.name {
		return 0, fmt.Errorf("%w: no leader known", ErrNotLeader)
	}
	var out readIndexResponse
	if err := r.get(ctx, "http://"+string(addr)+"/raft/readindex", &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// fetchInfo asks a member for its info and remembers it.
func (r *replica) fetchInfo(ctx context.Context, name, addr string) (memberInfo, error) {
	var in memberInfo
	if err := r.get(ctx, "http://"+addr+"/raft/info", &in); err != nil {
		return memberInfo{}, err
	}
	in.at = time.Now()
	r.imu.Lock()
	r.info[name] = in
	r.imu.Unlock()
	return in, nil
}
