package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Faults on the peer connections (issue 13): every replica reaches every other one
// through a TCP proxy made by the test, one per direction, which the test can cut.
// The peer port carries Raft and peer HTTP on one port; the proxy forwards bytes.

// linkProxy forwards the connections made to its address to one replica's peer port,
// until cut: then it closes them, and every new one, at once.
type linkProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newLinkProxy(t testing.TB, target string) *linkProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &linkProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go p.serve()
	return p
}

func (p *linkProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

// track registers c, or closes it and says false when the link is cut.
func (p *linkProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *linkProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		c.Close()
	}
}

func (p *linkProxy) forward(in net.Conn) {
	if !p.track(in) {
		return
	}
	out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.untrack(in)
		return
	}
	if !p.track(out) {
		p.untrack(in)
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
	p.untrack(in, out)
	<-done
}

// setCut cuts the link (closing its connections) or heals it.
func (p *linkProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
			delete(p.conns, c)
		}
	}
}

// peerNet is the proxies between n replicas: links[from][to].
type peerNet struct {
	links [][]*linkProxy
}

// isolate cuts every link to and from replica i.
func (n *peerNet) isolate(i int) {
	for j := range n.links {
		if j != i {
			n.links[i][j].setCut(true)
			n.links[j][i].setCut(true)
		}
	}
}

// heal restores every link.
func (n *peerNet) heal() {
	for i := range n.links {
		for j, l := range n.links[i] {
			if i != j {
				l.setCut(false)
			}
		}
	}
}

// StartFaultyReplicas starts n replicas whose peer connections all go through
// proxies the test can cut.
func StartFaultyReplicas(t testing.TB, n int, extra ...string) ([]*Replica, *peerNet) {
	t.Helper()
	pn := &peerNet{links: make([][]*linkProxy, n)}
	for i := range pn.links {
		pn.links[i] = make([]*linkProxy, n)
	}
	rs := StartReplicasRouted(t, n, func(from, to int, addr string) string {
		p := newLinkProxy(t, addr)
		pn.links[from][to] = p
		return p.ln.Addr().String()
	}, extra...)
	return rs, pn
}

// indexOf is r's index in rs.
func indexOf(rs []*Replica, r *Replica) int {
	for i, c := range rs {
		if c == r {
			return i
		}
	}
	return -1
}

// rawHTTP is a client without retries; every answer is the test's to judge.
func rawHTTP(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

// errUnknown marks an answer that does not tell whether a write happened: no answer,
// or a 5xx (504: the leader was lost mid-request).
var errUnknown = errors.New("outcome unknown")

// doJSON sends body (nil: none) and decodes a 2xx answer's metadata into meta; a
// non-2xx answer is an error with the status code (statusError), and a failure to get
// an answer, or a 5xx, wraps errUnknown.
func doJSON(hc *http.Client, method, url string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", errUnknown, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%w: read answer: %v", errUnknown, err)
	}
	if resp.StatusCode >= 500 {
		return fmt.Errorf("%w: %s: %s", errUnknown, resp.Status, bytes.TrimSpace(b))
	}
	if resp.StatusCode/100 != 2 {
		return statusError{resp.StatusCode, string(bytes.TrimSpace(b))}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

type statusError struct {
	code int
	body string
}

func (e statusError) Error() string { return fmt.Sprintf("%d: %s", e.code, e.body) }

func isStatus(err error, code int) bool {
	var se statusError
	return errors.As(err, &se) && se.code == code
}

// localPodState is the replica's full pod list read from its own state
// (resourceVersion=0): name -> uid@resourceVersion.
func localPodState(hc *http.Client, r *Replica) (map[string]string, error) {
	var list struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := doJSON(hc, http.MethodGet, r.URL+"/api/v1/namespaces/default/pods?resourceVersion=0", nil, &list); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(list.Items))
	for _, p := range list.Items {
		out[p.Metadata.Name] = string(p.Metadata.UID) + "@" + p.Metadata.ResourceVersion
	}
	return out, nil
}

// createLoad writes pods from `writers` goroutines spread over the targets until
// stopped, recording every acknowledged write.
type createLoad struct {
	mu    sync.Mutex
	acked map[string]string // name -> resourceVersion answered with the 2xx
	by    map[string]int    // name -> the replica that answered
	count atomic.Int64
	stop  chan struct{}
	wg    sync.WaitGroup
}

func startCreateLoad(rs []*Replica, writers int, prefix string) *createLoad {
	l := &createLoad{acked: map[string]string{}, by: map[string]int{}, stop: make(chan struct{})}
	hc := rawHTTP(10 * time.Second)
	for w := range writers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				target := (w + i) % len(rs)
				name := fmt.Sprintf("%s-%02d-%05d", prefix, w, i)
				body, _ := json.Marshal(replicaPod(name))
				var got struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				}
				// One attempt per name: a failed attempt's name is not reused, so an
				// acknowledgement is always the answer to the one request made.
				if err := doJSON(hc, http.MethodPost, rs[target].URL+"/api/v1/namespaces/default/pods", body, &got); err == nil {
					l.mu.Lock()
					l.acked[name], l.by[name] = got.Metadata.ResourceVersion, target
					l.mu.Unlock()
					l.count.Add(1)
				}
			}
		}()
	}
	return l
}

func (l *createLoad) finish() {
	close(l.stop)
	l.wg.Wait()
}

// ackedBy counts the writes the replica answered with a 2xx.
func (l *createLoad) ackedBy(i int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, by := range l.by {
		if by == i {
			n++
		}
	}
	return n
}

// TestReplicasPartition cuts the leader off from both followers under write load:
// the majority elects a new leader and goes on; after healing the old leader rejoins
// as a follower and catches up; every acknowledged write is on every replica, and the
// three full lists are identical.
func TestReplicasPartition(t *testing.T) {
	rs, pn := StartFaultyReplicas(t, 3)
	hc := rawHTTP(20 * time.Second)
	load := startCreateLoad(rs, 24, "part")
	defer func() {
		select {
		case <-load.stop:
		default:
			load.finish()
		}
	}()
	Eventually(t, 60*time.Second, "writes before the cut", func() error {
		if n := load.count.Load(); n < 200 {
			return fmt.Errorf("%d acknowledged", n)
		}
		return nil
	})
	old := Leader(t, rs)
	oi := indexOf(rs, old)
	pn.isolate(oi)
	atCut, oldAtCut := load.count.Load(), load.ackedBy(oi)
	t.Logf("isolated the leader %s after %d acknowledged writes", old.Name, atCut)

	// The majority elects another leader and acknowledges writes.
	var majority []*Replica
	for _, r := range rs {
		if r != old {
			majority = append(majority, r)
		}
	}
	var newLeader string
	Eventually(t, 60*time.Second, "a new leader among the majority", func() error {
		for _, r := range majority {
			name, err := leaderName(r.URL)
			if err == nil && name != old.Name {
				newLeader = name
				return nil
			}
		}
		return errors.New("the majority names no new leader")
	})
	Eventually(t, 60*time.Second, "the isolated leader steps down", func() error {
		name, err := leaderName(old.URL)
		if err == nil && name == old.Name {
			return errors.New("it still says it leads")
		}
		return nil
	})
	majorityAcks := func() int {
		n := 0
		for _, r := range majority {
			n += load.ackedBy(indexOf(rs, r))
		}
		return n
	}
	atElection := majorityAcks()
	Eventually(t, 90*time.Second, "the majority acknowledges writes", func() error {
		if n := majorityAcks() - atElection; n < 200 {
			return fmt.Errorf("%d acknowledged by the majority since %s leads", n, newLeader)
		}
		return nil
	})

	// Heal: the old leader rejoins as a follower of the new one.
	oldDuringCut := load.ackedBy(oi) - oldAtCut
	pn.heal()
	Eventually(t, 90*time.Second, old.Name+" follows "+newLeader, func() error {
		if err := readyz(old.URL); err != nil {
			return err
		}
		name, err := leaderName(old.URL)
		if err != nil {
			return err
		}
		if name == old.Name {
			return errors.New("it leads again")
		}
		return nil
	})
	atHeal := load.count.Load()
	Eventually(t, 90*time.Second, "writes after healing", func() error {
		if n := load.count.Load() - atHeal; n < 100 {
			return fmt.Errorf("%d acknowledged since healing", n)
		}
		return nil
	})
	load.finish()

	// Every replica ends with the same state (read locally), holding every
	// acknowledged write at the resourceVersion it was answered with.
	states := make([]map[string]string, len(rs))
	Eventually(t, 90*time.Second, "the replicas agree", func() error {
		for i, r := range rs {
			s, err := localPodState(hc, r)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			states[i] = s
		}
		for i := 1; i < len(rs); i++ {
			if err := sameState(states[0], states[i]); err != nil {
				return fmt.Errorf("%s and %s: %w", rs[0].Name, rs[i].Name, err)
			}
		}
		return nil
	})
	byOld := load.ackedBy(oi)
	load.mu.Lock()
	defer load.mu.Unlock()
	missing := 0
	for name, rv := range load.acked {
		if got := states[0][name]; !strings.HasSuffix(got, "@"+rv) {
			missing++
			if missing <= 10 {
				t.Errorf("acknowledged %s (by %s) at %s is %q", name, rs[load.by[name]].Name, rv, got)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d acknowledged writes missing or changed", missing)
	}
	t.Logf("%d writes acknowledged (%d by %s in all, %d while it was cut off: committed before the cut), %d pods on every replica",
		len(load.acked), byOld, old.Name, oldDuringCut, len(states[0]))
}
