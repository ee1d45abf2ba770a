package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	utilexec "k8s.io/utils/exec"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
	"github.com/kubeactor/kubeactor/nodeagent/server"
	"github.com/kubeactor/kubeactor/nodeagent/server/servertest"
	"github.com/kubeactor/kubeactor/nodeagent/server/streamclient"
)

// agent is a running server on fakes.
type agent struct {
	rt   *servertest.Runtime
	host *servertest.Host
	http *httptest.Server
	feed chan string
}

func newAgent(t *testing.T) *agent {
	t.Helper()
	feed := make(chan string)
	rt := servertest.NewRuntime(
		&servertest.Container{ID: "c-web-0", Log: "old 1\nold 2\n"},
		&servertest.Container{ID: "c-web-1", Log: "line 1\nline 2\nline 3\n", Feed: feed,
			Stats: runtime.Stats{Time: time.Unix(100, 0).UTC(), CPUUsageNanos: 5, MemoryUsageBytes: 6, MemoryLimitBytes: 7, RxBytes: 8, TxBytes: 9}},
	)
	host := &servertest.Host{
		PodList: []*corev1.Pod{{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx"}, {Name: "sidecar"}}},
		}},
		IDs: map[string][]string{"default/web/nginx": {"c-web-0", "c-web-1"}},
		IPs: map[string]string{"default/web": "127.0.0.1"},
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	s := server.New(server.Config{NodeName: "n1", Runtime: rt, Host: host, Log: log})
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return &agent{rt: rt, host: host, http: hs, feed: feed}
}

func (a *agent) do(t *testing.T, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestEndpoints(t *testing.T) {
	a := newAgent(t)
	tests := []struct {
		name, method, path string
		code               int
		want               []string // substrings of the body
	}{
		{"healthz", "GET", "/healthz", 200, []string{"ok"}},
		{"pods", "GET", "/pods", 200, []string{`"kind":"PodList"`, `"name":"web"`}},
		{"spec", "GET", "/spec", 200, []string{`"num_cores":2`, `"memory_capacity":4294967296`, `"kernel_version":"6.1.0"`, `"docker_version":"20.10.24"`}},
		{"all stats", "GET", "/stats", 200, []string{`"node":"n1"`, `"name":"nginx"`, `"usageCoreNanoSeconds":5`, `"usageBytes":6`, `"rxBytes":8`, `"txBytes":9`}},
		{"container stats", "GET", "/stats/default/web/u1/nginx", 200, []string{`"id":"c-web-1"`, `"limitBytes":7`}},
		{"stats of a missing container", "GET", "/stats/default/web/u1/sidecar", 404, []string{"not found"}},
		{"logs", "GET", "/containerLogs/default/web/nginx", 200, []string{"line 1\nline 2\nline 3\n"}},
		{"logs tail", "GET", "/containerLogs/default/web/nginx?tailLines=1", 200, []string{"line 3\n"}},
		{"logs timestamps", "GET", "/containerLogs/default/web/nginx?tailLines=1&timestamps=true", 200, []string{"2015-07-10T00:00:00.000000000Z line 3\n"}},
		{"logs previous", "GET", "/containerLogs/default/web/nginx?previous=true", 200, []string{"old 1\nold 2\n"}},
		{"logs limitBytes", "GET", "/containerLogs/default/web/nginx?limitBytes=8", 200, []string{"line 1\nl"}},
		{"logs of a missing container", "GET", "/containerLogs/default/web/sidecar", 404, []string{"container sidecar not found"}},
		{"logs bad tail", "GET", "/containerLogs/default/web/nginx?tailLines=x", 400, []string{"tailLines"}},
		{"logs bad path", "GET", "/containerLogs/default/web", 404, []string{"expected"}},
		{"run", "POST", "/run/default/web/nginx?cmd=echo+hello+world", 200, []string{"hello world\n"}},
		{"run stderr", "POST", "/run/default/web/u1/nginx?cmd=warn+oops", 200, []string{"oops\n"}},
		{"run without cmd", "POST", "/run/default/web/nginx", 400, []string{"cmd is required"}},
		{"exec without command", "POST", "/exec/default/web/nginx?stdout=true", 400, []string{"at least one command"}},
		{"exec without streams", "POST", "/exec/default/web/nginx?command=ls", 400, []string{"at least 1 of stdin"}},
		{"exec in a missing container", "POST", "/exec/default/web/sidecar?command=ls&output=1", 404, []string{"not found"}},
		{"port-forward to a missing pod", "POST", "/portForward/default/nope", 404, []string{"not found"}},
		{"attach without streams", "POST", "/attach/default/web/nginx", 400, []string{"at least 1 of stdin"}},
		{"attach bad path", "POST", "/attach/default/web", 404, []string{"expected /attach/"}},
		{"attach with a runtime that cannot", "POST", "/attach/default/web/nginx?output=1", 501, []string{"cannot attach"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := a.do(t, tt.method, tt.path)
			if code != tt.code {
				t.Fatalf("code %d, want %d: %s", code, tt.code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body %q lacks %q", body, w)
				}
			}
			if tt.name == "logs limitBytes" && body != "line 1\nl" {
				t.Errorf("body %q, want exactly 8 bytes", body)
			}
		})
	}
}

func TestLogsFollowStreams(t *testing.T) {
	a := newAgent(t)
	resp, err := http.Get(a.http.URL + "/containerLogs/default/web/nginx?follow=true&tailLines=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("code %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for _, line := range []string{"live 1\n", "live 2\n"} {
		a.feed <- line // blocks until the fake's Logs takes it: the stream is open
		got, err := r.ReadString('\n')
		if err != nil || got != line {
			t.Fatalf("read %q, %v; want %q", got, err, line)
		}
	}
	close(a.feed) // the container stops: the stream ends
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("after stop: %q, %v", rest, err)
	}
}

func TestParseLogQuery(t *testing.T) {
	now := time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		query   string
		want    runtime.LogOptions
		prev    bool
		limit   int64
		wantErr string
	}{
		{"empty", "", runtime.LogOptions{Tail: -1}, false, 0, ""},
		{"all", "follow=true&timestamps=1&tailLines=5&limitBytes=10&sinceSeconds=60", runtime.LogOptions{Follow: true, Timestamps: true, Tail: 5, Since: now.Add(-time.Minute)}, false, 10, ""},
		{"since time", "sinceTime=2015-07-10T11:00:00Z", runtime.LogOptions{Tail: -1, Since: now.Add(-time.Hour)}, false, 0, ""},
		{"previous", "previous=true", runtime.LogOptions{Tail: -1}, true, 0, ""},
		{"follow and previous", "follow=true&previous=true", runtime.LogOptions{}, false, 0, "cannot be used together"},
		{"both since", "sinceTime=2015-07-10T11:00:00Z&sinceSeconds=1", runtime.LogOptions{}, false, 0, "at most one"},
		{"bad follow", "follow=maybe", runtime.LogOptions{}, false, 0, "follow must be"},
		{"negative tail", "tailLines=-1", runtime.LogOptions{}, false, 0, "tailLines"},
		{"zero limit", "limitBytes=0", runtime.LogOptions{}, false, 0, "limitBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			got, err := server.ParseLogQuery(q, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Opts != tt.want || got.Previous != tt.prev || got.LimitBytes != tt.limit {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

// execDialer dials the agent's exec path for a command.
func execDialer(t *testing.T, base, path string, query url.Values) *url.URL {
	t.Helper()
	u, err := url.Parse(base + path + "?" + query.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestExecThroughSPDY(t *testing.T) {
	a := newAgent(t)
	tests := []struct {
		name           string
		cmd            []string
		stdin          string
		tty            bool
		stdout, stderr string
		code           int
	}{
		{"stdout", []string{"echo", "hi", "there"}, "", false, "hi there\n", "", 0},
		{"stderr apart", []string{"warn", "careful"}, "", false, "", "careful\n", 0},
		{"stdin", []string{"cat"}, "from stdin\n", false, "from stdin\n", "", 0},
		{"exit code", []string{"exit", "3"}, "", false, "", "exiting with 3\n", 3},
		{"tty merges", []string{"warn", "merged"}, "", true, "merged\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{"command": tt.cmd, "output": {"1"}}
			if !tt.tty {
				q.Set("error", "1")
			} else {
				q.Set("tty", "1")
			}
			if tt.stdin != "" {
				q.Set("input", "1")
			}
			d, err := streamclient.NewDialer(&rest.Config{Host: a.http.URL}, "POST", execDialer(t, a.http.URL, "/exec/default/web/nginx", q))
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			opts := streamclient.ExecOptions{Stdout: &stdout, Stderr: &stderr, TTY: tt.tty}
			if tt.stdin != "" {
				opts.Stdin = strings.NewReader(tt.stdin)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = streamclient.Exec(ctx, d, opts)
			var exit utilexec.ExitError
			switch {
			case tt.code == 0 && err != nil:
				t.Fatalf("exec: %v", err)
			case tt.code != 0 && (!errors.As(err, &exit) || exit.ExitStatus() != tt.code):
				t.Fatalf("exec error %v, want exit code %d", err, tt.code)
			}
			if stdout.String() != tt.stdout || stderr.String() != tt.stderr {
				t.Fatalf("stdout %q stderr %q, want %q %q", stdout.String(), stderr.String(), tt.stdout, tt.stderr)
			}
		})
	}
}

// echoServer answers each connection with what it reads, upper-cased by nothing:
// it echoes bytes back until the client half-closes.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func TestPortForwardThroughSPDY(t *testing.T) {
	a := newAgent(t)
	_, port, _ := net.SplitHostPort(echoServer(t))
	var remote uint16
	fmt.Sscan(port, &remote)
	u, _ := url.Parse(a.http.URL + "/portForward/default/web")
	d, err := streamclient.NewDialer(&rest.Config{Host: a.http.URL}, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- streamclient.PortForward(ctx, d, []streamclient.Forward{{Listener: ln, Remote: remote}}, io.Discard)
	}()
	for i, msg := range []string{"first connection", "second connection"} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			servertest.EchoRoundTrip(t, ln.Addr().String(), msg)
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("port-forward: %v", err)
	}
}

func TestRunAndAddr(t *testing.T) {
	s := server.New(server.Config{Address: "127.0.0.1", Port: 0, Host: &servertest.Host{}, Runtime: servertest.NewRuntime()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for s.Addr() == "" {
		select {
		case <-deadline.C:
			t.Fatal("server did not bind")
		case <-tick.C:
		}
	}
	resp, err := http.Get("http://" + s.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("healthz %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestStatsJSONShape(t *testing.T) {
	a := newAgent(t)
	_, body := a.do(t, "GET", "/stats")
	var st server.Stats
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Pods) != 1 || len(st.Pods[0].Containers) != 1 || st.Pods[0].Containers[0].Network.TxBytes != 9 {
		t.Fatalf("stats %+v", st)
	}
}

// TestReadOnlyAndHealthzPorts: the read-only port serves pods, spec, stats and
// healthz but none of logs, exec, port-forward and run; the healthz port only health.
func TestReadOnlyAndHealthzPorts(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	s := server.New(server.Config{NodeName: "n1", Runtime: servertest.NewRuntime(), Host: &servertest.Host{}, Log: log})
	tests := []struct {
		name    string
		handler http.Handler
		method  string
		path    string
		want    int
	}{
		{"read-only healthz", s.ReadOnlyHandler(), http.MethodGet, "/healthz", http.StatusOK},
		{"read-only pods", s.ReadOnlyHandler(), http.MethodGet, "/pods", http.StatusOK},
		{"read-only spec", s.ReadOnlyHandler(), http.MethodGet, "/spec", http.StatusOK},
		{"read-only stats", s.ReadOnlyHandler(), http.MethodGet, "/stats", http.StatusOK},
		{"read-only: no logs", s.ReadOnlyHandler(), http.MethodGet, "/containerLogs/default/web/web", http.StatusNotFound},
		{"read-only: no exec", s.ReadOnlyHandler(), http.MethodPost, "/exec/default/web/web?command=ls", http.StatusNotFound},
		{"read-only: no port-forward", s.ReadOnlyHandler(), http.MethodPost, "/portForward/default/web", http.StatusNotFound},
		{"read-only: no run", s.ReadOnlyHandler(), http.MethodPost, "/run/default/web/web?cmd=ls", http.StatusNotFound},
		{"read-only: no attach", s.ReadOnlyHandler(), http.MethodPost, "/attach/default/web/web?output=1", http.StatusNotFound},
		{"healthz", server.HealthzHandler(), http.MethodGet, "/healthz", http.StatusOK},
		{"healthz: nothing else", server.HealthzHandler(), http.MethodGet, "/pods", http.StatusNotFound},
		{"main port: pods too", s.Handler(), http.MethodGet, "/pods", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tc.handler.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.want {
				t.Fatalf("%s %s = %d %q, want %d", tc.method, tc.path, rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
}
