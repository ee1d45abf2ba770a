package apiclient

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deadURL is the URL of a loopback port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

func TestFailover(t *testing.T) {
	var hits atomic.Int32
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/busy" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(append([]byte(r.Method+" "+r.URL.Path+" "), body...))
	}))
	defer live.Close()
	dead := deadURL(t)
	f, err := NewFailover([]string{dead, live.URL}, http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: f}
	tests := []struct {
		method, path, body, want string
		code                     int
	}{
		{"GET", "/api/v1/pods", "", "GET /api/v1/pods ", 200},
		{"POST", "/api/v1/namespaces/default/pods", `{"a":1}`, `POST /api/v1/namespaces/default/pods {"a":1}`, 200},
		{"GET", "/busy", "", "", http.StatusServiceUnavailable}, // an answer is the server's: no failover
	}
	for _, tc := range tests {
		req, err := http.NewRequest(tc.method, dead+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || (tc.want != "" && string(got) != tc.want) {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, got, tc.code, tc.want)
		}
	}
	if f.Current() != live.URL {
		t.Errorf("current %s, want the live server %s", f.Current(), live.URL)
	}
	if hits.Load() != int32(len(tests)) {
		t.Errorf("live server got %d requests, want %d", hits.Load(), len(tests))
	}
	// All down: the error is the last server's.
	all, _ := NewFailover([]string{dead, deadURL(t)}, http.DefaultTransport)
	if _, err := (&http.Client{Transport: all}).Get(dead + "/x"); err == nil {
		t.Errorf("no server up, yet an answer")
	}
}

func TestClientWithServerList(t *testing.T) {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`)
	}))
	defer live.Close()
	c, err := New(Options{Server: deadURL(t) + "," + live.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.Clientset().CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil || list.ResourceVersion != "7" {
		t.Fatalf("list through the second server: %v %v", list, err)
	}
	for _, bad := range []string{"", "http://a:1,ftp://b", " , "} {
		if _, err := New(Options{Server: bad}); err == nil {
			t.Errorf("server %q accepted", bad)
		}
	}
}
