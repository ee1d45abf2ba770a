package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rvOf finds the resourceVersion in a watch line, or -1.
func rvOf(line []byte) int64 {
	i := bytes.Index(line, []byte(`"resourceVersion":"`))
	if i < 0 {
		return -1
	}
	j := i + len(`"resourceVersion":"`)
	k := bytes.IndexByte(line[j:], '"')
	if k < 0 {
		return -1
	}
	n, err := strconv.ParseInt(string(line[j:j+k]), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// rssOf is pid's resident set in bytes, or 0.
func rssOf(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// metricValue scrapes the server's /metrics for the sample named name (with its labels).
func metricValue(base, name string) (float64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, nil
}

// TestThousandWatchers runs 1,000 pod watchers through 20,000 creates (paced at
// 1,000/s, each pod with a 1 KiB annotation) on a server that keeps 5,000 revisions of
// change log. 999 of them read as they go and must see every create, in revision
// order; one stops reading: the server must not buffer for it without bound but end
// it with a 410 Gone once it falls out of the change log, and it recovers by
// relisting and watching again. The server's RSS is logged during and after.
func TestThousandWatchers(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 creates to 1,000 watchers")
	}
	const (
		watchers = 1000
		events   = 20000
		rate     = 1000
	)
	s := StartServer(t, "", "--change-log-window", "5000")
	pid := s.cmd.Process.Pid
	rss0 := rssOf(pid)
	pad := strings.Repeat("x", 1024)

	// The stalled watcher: a small receive buffer, and nothing read until the server
	// gave up on it.
	u, _ := url.Parse(s.URL)
	stalledConn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer stalledConn.Close()
	_ = stalledConn.(*net.TCPConn).SetReadBuffer(4 << 10)
	stalled := &rawClient{conn: stalledConn, r: bufio.NewReaderSize(stalledConn, 4<<10), host: u.Host}
	stalledLines, err := stalled.watch("/api/v1/namespaces/default/pods?watch=true&resourceVersion=1")
	if err != nil {
		t.Fatal(err)
	}

	var (
		ready, done sync.WaitGroup
		mu          sync.Mutex
		problems    []string
		conns       []*rawClient
	)
	for w := 1; w < watchers; w++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			c, err := dialRaw(s.URL)
			if err != nil {
				mu.Lock()
				problems = append(problems, err.Error())
				mu.Unlock()
				ready.Done()
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			r, err := c.watch("/api/v1/namespaces/default/pods?watch=true&resourceVersion=1")
			ready.Done()
			if err != nil {
				mu.Lock()
				problems = append(problems, err.Error())
				mu.Unlock()
				return
			}
			seen := make([]bool, events)
			got, lastRV := 0, int64(0)
			problem := ""
			for got < events && problem == "" {
				line, err := r.ReadSlice('\n')
				if err != nil {
					problem = fmt.Sprintf("watcher %d: %v after %d events", w, err, got)
					break
				}
				if !bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)) {
					problem = fmt.Sprintf("watcher %d: unexpected event %.200s", w, line)
					break
				}
				idx, rv := podIndex(line), rvOf(line)
				switch {
				case idx < 0 || idx >= events || seen[idx]:
					problem = fmt.Sprintf("watcher %d: pod %d again or unknown", w, idx)
				case rv <= lastRV:
					problem = fmt.Sprintf("watcher %d: revision %d after %d", w, rv, lastRV)
				}
				seen[idx], lastRV = true, rv
				got++
			}
			if problem != "" {
				mu.Lock()
				problems = append(problems, problem)
				mu.Unlock()
			}
		}()
	}
	ready.Wait()

	// RSS sampled while the creates run and the stalled watcher lags.
	var peak atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			peak.Store(max(peak.Load(), rssOf(pid)))
			select {
			case <-tick.C:
			case <-stopSampling:
				return
			}
		}
	}()

	jobs := make(chan int, events)
	var writers sync.WaitGroup
	var failed atomic.Int64
	for range 64 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			c, err := dialRaw(s.URL)
			if err != nil {
				failed.Add(1)
				return
			}
			defer c.close()
			for idx := range jobs {
				body := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-%d","annotations":{"pad":%q}},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"busybox:1.36"}]}}`, idx, pad))
				if code, err := c.post("/api/v1/namespaces/default/pods", body); err != nil || code != http.StatusCreated {
					failed.Add(1)
				}
			}
		}()
	}
	start := time.Now()
	for idx := 0; idx < events; idx++ {
		if wait := time.Until(start.Add(time.Duration(idx) * time.Second / rate)); wait > 0 {
			<-time.After(wait)
		}
		jobs <- idx
	}
	close(jobs)
	writers.Wait()
	writeRate := float64(events) / time.Since(start).Seconds()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d creates failed", f)
	}

	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(120 * time.Second):
		for _, c := range conns {
			c.close()
		}
		<-finished
	}
	mu.Lock()
	if len(problems) > 0 {
		t.Fatalf("%d fast watchers missed events or order; first: %s", len(problems), problems[0])
	}
	mu.Unlock()

	// The server ended the stalled watch while it still read nothing.
	Eventually(t, 30*time.Second, "the stalled watcher terminated", func() error {
		v, err := metricValue(s.URL, `apiserver_terminated_watchers_total{resource="pods"}`)
		if err != nil {
			return err
		}
		if v < 1 {
			return fmt.Errorf("terminated watchers: %v", v)
		}
		return nil
	})
	close(stopSampling)
	<-sampled

	// Resumed, it reads what was queued for it, in order, then the 410.
	var got int
	var lastRV int64
	var last []byte
	for {
		line, err := stalledLines.ReadSlice('\n')
		if err != nil {
			break
		}
		last = append(last[:0], line...)
		if bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)) {
			rv := rvOf(line)
			if rv <= lastRV {
				t.Fatalf("stalled watcher: revision %d after %d", rv, lastRV)
			}
			lastRV = rv
			got++
		}
	}
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Code   int    `json:"code"`
			Reason string `json:"reason"`
		} `json:"object"`
	}
	if err := json.Unmarshal(last, &ev); err != nil || ev.Type != "ERROR" || ev.Object.Code != http.StatusGone || ev.Object.Reason != "Expired" {
		t.Fatalf("stalled watcher's last event %.300s (%v), want ERROR 410 Expired", last, err)
	}
	if got >= events {
		t.Fatalf("the stalled watcher was sent all %d events", got)
	}

	// It recovers as a client-go reflector does: relist, then watch from the list.
	resp, err := http.Get(s.URL + "/api/v1/namespaces/default/pods")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || len(list.Items) != events {
		t.Fatalf("relist: %d pods (%v), want %d", len(list.Items), err, events)
	}
	again, err := dialRaw(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer again.close()
	lines, err := again.watch("/api/v1/namespaces/default/pods?watch=true&resourceVersion=" + list.Metadata.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	poster, err := dialRaw(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer poster.close()
	if code, err := poster.post("/api/v1/namespaces/default/pods", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"after"},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"busybox:1.36"}]}}`)); err != nil || code != http.StatusCreated {
		t.Fatalf("create after: %d %v", code, err)
	}
	line, err := lines.ReadSlice('\n')
	if err != nil || !bytes.Contains(line, []byte(`"name":"after"`)) {
		t.Fatalf("rewatch: %.200s %v", line, err)
	}
	for _, c := range conns {
		c.close()
	}
	Eventually(t, 30*time.Second, "watches closed", func() error {
		v, err := metricValue(s.URL, `apiserver_registered_watchers{resource="pods"}`)
		if err != nil || v > 1 {
			return fmt.Errorf("%v watchers (%v)", v, err)
		}
		return nil
	})
	t.Logf("%d creates at %.0f/s to %d watchers; stalled watcher sent %d events then 410; server RSS %d MiB before, peak %d MiB during, %d MiB after",
		events, writeRate, watchers, got, rss0>>20, peak.Load()>>20, rssOf(pid)>>20)
}
