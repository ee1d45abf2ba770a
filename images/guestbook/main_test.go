package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// fakeRedis is a RESP server on 127.0.0.1 that understands SET and GET, and answers
// an error for anything else (or for every command when failing is set).
type fakeRedis struct {
	ln      net.Listener
	mu      sync.Mutex
	data    map[string]string
	failing bool
}

func startFakeRedis(t *testing.T) *fakeRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{ln: ln, data: map[string]string{}}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); f.serve(c) }()
		}
	}()
	return f
}

func (f *fakeRedis) addr() string { return f.ln.Addr().String() }

func (f *fakeRedis) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		f.mu.Lock()
		var out string
		switch {
		case f.failing:
			out = "-ERR injected\r\n"
		case len(args) == 3 && strings.EqualFold(args[0], "SET"):
			f.data[args[1]] = args[2]
			out = "+OK\r\n"
		case len(args) == 2 && strings.EqualFold(args[0], "GET"):
			if v, ok := f.data[args[1]]; ok {
				out = "$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
			} else {
				out = "$-1\r\n"
			}
		default:
			out = "-ERR unknown command\r\n"
		}
		f.mu.Unlock()
		if _, err := io.WriteString(c, out); err != nil {
			return
		}
	}
}

// readCommand reads a RESP array of bulk strings (the fake's side of appendCommand).
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, errors.New("not an array")
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil {
		return nil, err
	}
	args := make([]string, 0, n)
	for range n {
		rep, err := readReply(r)
		if err != nil {
			return nil, err
		}
		args = append(args, rep.str)
	}
	return args, nil
}

func (f *fakeRedis) get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.data[key]
	return v, ok
}

func (f *fakeRedis) set(key, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[key] = value
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestRoute(t *testing.T) {
	envHosts := map[string]string{
		"GET_HOSTS_FROM":            "env",
		"REDIS_MASTER_SERVICE_HOST": "10.254.208.57",
		"REDIS_SLAVE_SERVICE_HOST":  "10.254.78.102",
	}
	tests := []struct {
		name   string
		query  string
		env    map[string]string
		want   op
		wantOK bool
	}{
		{name: "no cmd is the page", query: "key=messages", env: envHosts},
		{name: "set from env", query: "cmd=set&key=messages&value=Hello", env: envHosts, wantOK: true,
			want: op{write: true, addr: "10.254.208.57:6379", key: "messages", value: "Hello"}},
		{name: "get from env", query: "cmd=get&key=messages", env: envHosts, wantOK: true,
			want: op{addr: "10.254.78.102:6379", key: "messages"}},
		{name: "any other cmd reads", query: "cmd=list&key=k", env: envHosts, wantOK: true,
			want: op{addr: "10.254.78.102:6379", key: "k"}},
		{name: "empty cmd reads", query: "cmd=&key=k", env: envHosts, wantOK: true,
			want: op{addr: "10.254.78.102:6379", key: "k"}},
		{name: "set via dns", query: "cmd=set&key=k&value=v", env: map[string]string{"REDIS_MASTER_SERVICE_HOST": "10.0.0.1"}, wantOK: true,
			want: op{write: true, addr: "redis-master:6379", key: "k", value: "v"}},
		{name: "get via dns", query: "cmd=get&key=k", env: map[string]string{"GET_HOSTS_FROM": "dns"}, wantOK: true,
			want: op{addr: "redis-slave:6379", key: "k"}},
		{name: "env without the variable falls back to dns", query: "cmd=get&key=k", env: map[string]string{"GET_HOSTS_FROM": "env"}, wantOK: true,
			want: op{addr: "redis-slave:6379", key: "k"}},
		{name: "ipv6 service host", query: "cmd=set&key=k&value=a,b", env: map[string]string{"GET_HOSTS_FROM": "env", "REDIS_MASTER_SERVICE_HOST": "fd00::1"}, wantOK: true,
			want: op{write: true, addr: "[fd00::1]:6379", key: "k", value: "a,b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := route(q, envOf(tt.env))
			if ok != tt.wantOK || got != tt.want {
				t.Fatalf("route(%q) = %+v, %v; want %+v, %v", tt.query, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestHandler(t *testing.T) {
	master, slave := startFakeRedis(t), startFakeRedis(t)
	slave.set("messages", `Hello World!,<b>&"quoted"`)
	// The handler always dials port 6379; the test client maps that to the fakes.
	ports := map[string]string{"master": master.addr(), "slave": slave.addr()}
	h := handler{
		getenv: envOf(map[string]string{
			"GET_HOSTS_FROM":            "env",
			"REDIS_MASTER_SERVICE_HOST": "master",
			"REDIS_SLAVE_SERVICE_HOST":  "slave",
		}),
		redis: redirect{to: ports, c: redisClient{timeout: 5 * time.Second}},
		log:   logrus.New(),
	}

	tests := []struct {
		name        string
		target      string
		failing     bool
		wantStatus  int
		wantType    string
		wantBody    string // exact, or a prefix for the page
		wantMasterK string // key expected on the master afterwards
		wantMasterV string
	}{
		{name: "set writes to the master", target: "/guestbook.php?cmd=set&key=k1&value=Hi+Kubernetes!",
			wantStatus: 200, wantType: "application/json", wantBody: `{"message": "Updated"}`,
			wantMasterK: "k1", wantMasterV: "Hi Kubernetes!"},
		{name: "get reads from the slave", target: "/guestbook.php?cmd=get&key=messages",
			wantStatus: 200, wantType: "application/json", wantBody: `{"data": "Hello World!,<b>&\"quoted\""}`},
		{name: "get of a missing key is empty", target: "/guestbook.php?cmd=get&key=nope",
			wantStatus: 200, wantType: "application/json", wantBody: `{"data": ""}`},
		{name: "set is not visible on the slave", target: "/?cmd=get&key=k1",
			wantStatus: 200, wantType: "application/json", wantBody: `{"data": ""}`},
		{name: "no cmd serves the page", target: "/",
			wantStatus: 200, wantType: "text/html; charset=utf-8", wantBody: "<!DOCTYPE html>"},
		{name: "redis error is a 502", target: "/?cmd=get&key=messages", failing: true,
			wantStatus: 502, wantType: "application/json", wantBody: `ERR injected"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slave.mu.Lock()
			slave.failing = tt.failing
			slave.mu.Unlock()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
			if rec.Code != tt.wantStatus {
				t.Errorf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type %q, want %q", got, tt.wantType)
			}
			body := rec.Body.String()
			var ok bool
			switch {
			case tt.failing:
				ok = strings.HasPrefix(body, `{"error": "get \"messages\" from `) && strings.HasSuffix(body, tt.wantBody)
			case tt.wantType == "application/json":
				ok = body == tt.wantBody
			default:
				ok = strings.HasPrefix(body, tt.wantBody)
			}
			if !ok {
				t.Errorf("body %q, want %q", body, tt.wantBody)
			}
			if tt.wantMasterK != "" {
				if v, ok := master.get(tt.wantMasterK); !ok || v != tt.wantMasterV {
					t.Errorf("master %s = %q, %v; want %q", tt.wantMasterK, v, ok, tt.wantMasterV)
				}
			}
		})
	}
}

// redirect sends the handler's host:6379 to the fake servers' ports.
type redirect struct {
	to map[string]string // host -> fake address
	c  redisClient
}

func (r redirect) addr(a string) string {
	h, _, _ := net.SplitHostPort(a)
	return r.to[h]
}

func (r redirect) Set(ctx context.Context, addr, key, value string) error {
	return r.c.Set(ctx, r.addr(addr), key, value)
}

func (r redirect) Get(ctx context.Context, addr, key string) (string, bool, error) {
	return r.c.Get(ctx, r.addr(addr), key)
}
